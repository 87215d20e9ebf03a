// The row math of the ops with a class axis (NLLLoss, NLLLoss2d, their backwards,
// CrossEntropyLoss and its gradient) over ClassCall, and the launch that runs it: targets
// checked first (nothing is written for a refused call), rows in fixed chunks, reductions
// and data-dependent divisors summed per chunk in double and combined pairwise. A backend
// passes its own parallel loop; the results do not depend on how it splits the chunks.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "class_rows.h"
#include "class_rows_tile.h"
#include "pairwise_sum.h"

namespace nnplug::common {

// Whether op kind is one of the ops run here.
inline bool is_class_op(int32_t op) {
    return op == NNPLUG_OP_NLL_LOSS || op == NNPLUG_OP_NLL_LOSS_2D || op == NNPLUG_OP_NLL_LOSS_BACKWARD ||
           op == NNPLUG_OP_NLL_LOSS_2D_BACKWARD || op == NNPLUG_OP_CROSS_ENTROPY_LOSS ||
           op == NNPLUG_OP_CROSS_ENTROPY_LOSS_GRAD;
}

// The slots each op keeps its operands in.
struct ClassSlots {
    int self, target, weight, out;  // self: the logits or logProb the rows walk
};

inline ClassSlots class_slots(int32_t op) {
    switch (op) {
        case NNPLUG_OP_NLL_LOSS:
        case NNPLUG_OP_NLL_LOSS_2D:
            return {NNPLUG_NLL_LOSS_SELF, NNPLUG_NLL_LOSS_TARGET, NNPLUG_NLL_LOSS_WEIGHT,
                    NNPLUG_NLL_LOSS_OUT};
        case NNPLUG_OP_NLL_LOSS_BACKWARD:
        case NNPLUG_OP_NLL_LOSS_2D_BACKWARD:
            return {NNPLUG_NLL_LOSS_BACKWARD_SELF, NNPLUG_NLL_LOSS_BACKWARD_TARGET,
                    NNPLUG_NLL_LOSS_BACKWARD_WEIGHT, NNPLUG_NLL_LOSS_BACKWARD_OUT};
        case NNPLUG_OP_CROSS_ENTROPY_LOSS:
            return {NNPLUG_CROSS_ENTROPY_LOSS_INPUT, NNPLUG_CROSS_ENTROPY_LOSS_TARGET,
                    NNPLUG_CROSS_ENTROPY_LOSS_WEIGHT, NNPLUG_CROSS_ENTROPY_LOSS_LOSS};
        default:
            return {NNPLUG_CROSS_ENTROPY_LOSS_GRAD_LOG_PROB, NNPLUG_CROSS_ENTROPY_LOSS_GRAD_TARGET,
                    NNPLUG_CROSS_ENTROPY_LOSS_GRAD_WEIGHT, NNPLUG_CROSS_ENTROPY_LOSS_GRAD_OUT};
    }
}

// One launch of a class-axis op, planned once; its methods may run on several threads.
class ClassOp {
public:
    explicit ClassOp(const nnplug_op_desc& desc) : call_(desc), slots_(class_slots(desc.op)) {
        smoothing_ = static_cast<float>(nnplug_attr_f64(&desc, NNPLUG_ATTR_LABEL_SMOOTHING, 0.0));
        if (!call_.valid()) return;
        if (call_.present(slots_.weight)) {
            const nnplug_tensor& w = call_.operand(slots_.weight);
            weights_.assign(static_cast<size_t>(call_.classes()), 0.0f);
            for (int64_t c = 0; c < call_.classes(); ++c)
                weights_[static_cast<size_t>(c)] =
                    call_.load(slots_.weight, w.offset + c * call_.class_stride(slots_.weight));
        }
        const int lp =
            desc.op == NNPLUG_OP_CROSS_ENTROPY_LOSS ? int{NNPLUG_CROSS_ENTROPY_LOSS_LOG_PROB} : slots_.out;
        vector_rows_ =
            (desc.op == NNPLUG_OP_CROSS_ENTROPY_LOSS || desc.op == NNPLUG_OP_CROSS_ENTROPY_LOSS_GRAD) &&
            call_.class_stride(slots_.self) == 1 && call_.class_stride(lp) == 1 &&
            call_.operand(slots_.self).dtype == call_.operand(lp).dtype;
    }

    const ClassCall& call() const { return call_; }
    int32_t op() const { return call_.desc().op; }

    // The weight of class c (1 without a weight operand).
    float class_weight(int64_t c) const { return weights_.empty() ? 1.0f : weights_[static_cast<size_t>(c)]; }
    // A row's target weight: 0 for an ignored row.
    float row_weight(int64_t row) const {
        const int64_t t = call_.target(slots_.target, row);
        return call_.ignored(t) ? 0.0f : class_weight(t);
    }
    // Sum over all classes of the weights (label smoothing's gradient needs it).
    double all_class_weights() const {
        double sum = 0;
        for (int64_t c = 0; c < call_.classes(); ++c) sum += class_weight(c);
        return sum;
    }
    // The weights as a dense float32 array, or null when the op has none.
    const float* dense_weights() const { return weights_.empty() ? nullptr : weights_.data(); }

    // The row's loss and its weight (the mean's share of the divisor), writing what the row
    // writes: logProb (CrossEntropyLoss), the unreduced loss, or the gradient row.
    void nll_row(int64_t row, double& loss, double& weight) const;
    void nll_backward_row(int64_t row, float grad_scale) const;
    // The same for rows [begin, end) of a reduced call with dense int64 targets and rows
    // contiguous along the classes (nll_dense), without the per-element addressing; false
    // (nothing done) for any other call.
    bool nll_chunk(int64_t begin, int64_t end, double& loss_sum, double& weight_sum) const;
    bool nll_dense() const {
        return call_.dense_targets(slots_.target) != nullptr && reduces() &&
               call_.class_stride(slots_.self) == 1;
    }
    bool nll_backward_chunk(int64_t begin, int64_t end, float grad_scale) const;
    void cross_entropy_row(int64_t row, double& loss, double& weight) const;
    void cross_entropy_grad_row(int64_t row, float grad_scale, float all_weights) const;

    bool reduces() const { return call_.reduction() != NNPLUG_REDUCTION_NONE; }

    // Whether rows [begin, end) go through the vector row-block kernels at once.
    bool vector_chunks() const { return vector_rows_ && call_.rows_strided(); }
    // The same as cross_entropy_row / cross_entropy_grad_row for each row of [begin, end)
    // (at most kClassRowChunk rows), with the vector row-block kernels.
    void cross_entropy_chunk(int64_t begin, int64_t end, double& loss_sum, double& weight_sum) const;
    void cross_entropy_grad_chunk(int64_t begin, int64_t end, float grad_scale, float all_weights) const;
    void chunk_targets(int64_t begin, int64_t end, int64_t* targets) const;

    // A counted cross-entropy row's loss, from its target's logProb and the sum over classes
    // of w[c] * logProb[c] (used only with label smoothing).
    double cross_entropy_loss_of(float weight, float target_lp, double smooth) const {
        return (1.0 - smoothing_) * -(static_cast<double>(weight) * target_lp) -
               smoothing_ / static_cast<double>(call_.classes()) * smooth;
    }
    bool smooths() const { return smoothing_ > 0; }
    // A gradient row's factors, for g its gradient and target -1 when ignored: the row is
    // out[c] = a * exp(logProb[c]) - b * w[c], less nll at the target's class.
    void grad_factors(float g, int64_t target, float all_weights, float& a, float& b, float& nll) const {
        const float smooth = smoothing_ / static_cast<float>(call_.classes());
        nll = target >= 0 ? g * (1.0f - smoothing_) * class_weight(target) : 0.0f;
        a = nll + g * smooth * all_weights;
        b = g * smooth;
    }

private:
    simd::RowBlock row_block(int in_slot, int out_slot, int64_t begin, int64_t end) const {
        return {sdk::element_address(call_.operand(in_slot), call_.row_start(in_slot, begin)),
                call_.row_stride(in_slot),
                sdk::element_address_mutable(call_.operand(out_slot), call_.row_start(out_slot, begin)),
                call_.row_stride(out_slot),
                call_.operand(in_slot).dtype,
                end - begin,
                call_.classes()};
    }

    ClassCall call_;
    ClassSlots slots_;
    float smoothing_ = 0;
    SmallValues<float, 64> weights_;  // dense, one per class; empty without a weight operand
    bool vector_rows_ = false;        // the cross-entropy rows are contiguous, in one dtype
};

inline void ClassOp::nll_row(int64_t row, double& loss, double& weight) const {
    const int64_t t = call_.target(slots_.target, row);
    float l = 0.0f, w = 0.0f;
    if (!call_.ignored(t)) {
        w = class_weight(t);
        const float x =
            call_.load(slots_.self, call_.row_start(slots_.self, row) + t * call_.class_stride(slots_.self));
        l = -(w * x);
    }
    if (!reduces()) call_.store(slots_.out, call_.row_start(slots_.out, row), l);
    loss = l;
    weight = w;
}

inline void ClassOp::nll_backward_row(int64_t row, float grad_scale) const {
    const int64_t t = call_.target(slots_.target, row);
    const int64_t start = call_.row_start(slots_.out, row);
    const int64_t stride = call_.class_stride(slots_.out);
    if (stride == 1) {  // a row of zeros at once: 0.0 is all-zero bits in every float dtype
        const nnplug_tensor& out = call_.operand(slots_.out);
        const size_t size = nnplug_dtype_size(out.dtype);
        std::memset(static_cast<char*>(out.data) + start * size, 0,
                    static_cast<size_t>(call_.classes()) * size);
    } else {
        for (int64_t c = 0; c < call_.classes(); ++c) call_.store(slots_.out, start + c * stride, 0.0f);
    }
    if (call_.ignored(t)) return;
    float g = grad_scale;
    if (!reduces()) {
        const int slot = NNPLUG_NLL_LOSS_BACKWARD_GRAD_OUTPUT;
        g = call_.load(slot, call_.row_start(slot, row));
    }
    call_.store(slots_.out, start + t * stride, -(class_weight(t) * g));
}

inline bool ClassOp::nll_chunk(int64_t begin, int64_t end, double& loss_sum, double& weight_sum) const {
    if (!nll_dense()) return false;
    const int64_t* targets = call_.dense_targets(slots_.target);
    const nnplug_tensor& self = call_.operand(slots_.self);
    // Element 0 of row 0; a row's elements are at row * row_stride + class.
    const char* x = sdk::element_address(self, call_.row_start(slots_.self, 0));
    const int64_t row_stride = call_.row_stride(slots_.self);
    const auto rows = [&](auto widen) {               // nll_row's arithmetic, row by row, one dtype
        double loss = loss_sum, weight = weight_sum;  // kept in registers
        for (int64_t row = begin; row < end; ++row) {
            const int64_t t = targets[row];
            if (call_.ignored(t)) continue;
            const float w = class_weight(t);
            loss += -(w * widen(row * row_stride + t));
            weight += w;
        }
        loss_sum = loss;
        weight_sum = weight;
    };
    if (self.dtype == NNPLUG_DTYPE_F32)
        rows([x](int64_t i) { return reinterpret_cast<const float*>(x)[i]; });
    else if (self.dtype == NNPLUG_DTYPE_BF16)
        rows([x](int64_t i) { return bf16_to_f32(reinterpret_cast<const uint16_t*>(x)[i]); });
    else
        rows([x, dtype = self.dtype](int64_t i) { return load_as_f32(x, dtype, i); });
    return true;
}

inline bool ClassOp::nll_backward_chunk(int64_t begin, int64_t end, float grad_scale) const {
    const int64_t* targets = call_.dense_targets(slots_.target);
    const nnplug_tensor& out = call_.operand(slots_.out);
    const int64_t classes = call_.classes();
    if (targets == nullptr || !reduces() || call_.class_stride(slots_.out) != 1 ||
        (call_.rows() > 1 && call_.row_stride(slots_.out) != classes))
        return false;
    // The chunk's rows at once: 0.0 is all-zero bits in every float dtype.
    char* grad = sdk::element_address_mutable(out, call_.row_start(slots_.out, 0));
    const size_t size = nnplug_dtype_size(out.dtype);
    std::memset(grad + static_cast<size_t>(begin * classes) * size, 0,
                static_cast<size_t>((end - begin) * classes) * size);
    for (int64_t row = begin; row < end; ++row) {
        const int64_t t = targets[row];
        if (!call_.ignored(t))
            store_from_f32(grad, out.dtype, row * classes + t, -(class_weight(t) * grad_scale));
    }
    return true;
}

// A row the vector kernels do not take (not contiguous along the classes, or logProb in
// another dtype): log_softmax with one pass for the log-sum-exp (running max and sum
// together), a second to write logProb; the loss from the logProb values as float32.
inline void ClassOp::cross_entropy_row(int64_t row, double& loss, double& weight) const {
    const int64_t t = call_.target(slots_.target, row);
    const bool counted = !call_.ignored(t);
    double smooth = 0;
    float target_lp = 0;
    const int64_t in = call_.row_start(slots_.self, row), in_stride = call_.class_stride(slots_.self);
    const int lp_slot = NNPLUG_CROSS_ENTROPY_LOSS_LOG_PROB;
    const int64_t lp = call_.row_start(lp_slot, row), lp_stride = call_.class_stride(lp_slot);
    float max = -INFINITY;
    double sum = 0;
    for (int64_t c = 0; c < call_.classes(); ++c) {
        const float x = call_.load(slots_.self, in + c * in_stride);
        if (x == -INFINITY) continue;  // exp(-inf) adds nothing (and -inf - -inf would be NaN)
        if (x > max) {
            sum = sum * std::exp(static_cast<double>(max) - x) + 1.0;  // exp(-inf) = 0 for the first
            max = x;
        } else {
            sum += std::exp(static_cast<double>(x) - max);
        }
    }
    const float lse = static_cast<float>(max + std::log(sum));
    for (int64_t c = 0; c < call_.classes(); ++c) {
        const float value = call_.load(slots_.self, in + c * in_stride) - lse;
        call_.store(lp_slot, lp + c * lp_stride, value);
        if (c == t) target_lp = value;
        if (smoothing_ > 0) smooth += static_cast<double>(class_weight(c)) * value;
    }
    const float w = counted ? class_weight(t) : 0.0f;
    double l = 0;
    if (counted) l = cross_entropy_loss_of(w, target_lp, smooth);
    if (!reduces()) call_.store(slots_.out, call_.row_start(slots_.out, row), static_cast<float>(l));
    loss = l;
    weight = w;
}

// Targets of rows [begin, end) of a strided call, -1 for an ignored row.
inline void ClassOp::chunk_targets(int64_t begin, int64_t end, int64_t* targets) const {
    const int64_t start = call_.row_start(slots_.target, begin), stride = call_.row_stride(slots_.target);
    for (int64_t row = begin; row < end; ++row) {
        const int64_t t = call_.target_at(slots_.target, start + (row - begin) * stride);
        targets[row - begin] = call_.ignored(t) ? -1 : t;
    }
}

inline void ClassOp::cross_entropy_chunk(int64_t begin, int64_t end, double& loss_sum,
                                         double& weight_sum) const {
    float lse[kClassRowChunk];
    double smooth[kClassRowChunk];
    int64_t targets[kClassRowChunk];
    chunk_targets(begin, end, targets);
    const simd::RowBlock rows = row_block(slots_.self, NNPLUG_CROSS_ENTROPY_LOSS_LOG_PROB, begin, end);
    simd::log_softmax_rows(rows, dense_weights(), smoothing_ > 0, lse, smooth);
    const int64_t in = call_.row_start(slots_.self, begin),
                  in_row = call_.row_start(slots_.self, begin + 1) - in;
    const int64_t out = call_.row_start(slots_.out, begin), out_row = call_.row_stride(slots_.out);
    const int64_t stride = call_.class_stride(slots_.self);
    for (int64_t r = 0; r < end - begin; ++r) {
        const int64_t t = targets[r];
        double l = 0;
        float w = 0;
        if (t >= 0) {
            w = class_weight(t);
            l = cross_entropy_loss_of(w, call_.load(slots_.self, in + r * in_row + t * stride) - lse[r],
                                      smooth[r]);
        }
        if (!reduces()) call_.store(slots_.out, out + r * out_row, static_cast<float>(l));
        loss_sum += l;
        weight_sum += w;
    }
}

inline void ClassOp::cross_entropy_grad_chunk(int64_t begin, int64_t end, float grad_scale,
                                              float all_weights) const {
    float a[kClassRowChunk], b[kClassRowChunk], nll[kClassRowChunk];
    int64_t targets[kClassRowChunk];
    chunk_targets(begin, end, targets);
    const int grad_slot = NNPLUG_CROSS_ENTROPY_LOSS_GRAD_GRAD_LOSS;
    const int64_t grad = reduces() ? 0 : call_.row_start(grad_slot, begin);
    const int64_t grad_row = reduces() ? 0 : call_.row_stride(grad_slot);
    for (int64_t r = 0; r < end - begin; ++r) {
        const float g = reduces() ? grad_scale : call_.load(grad_slot, grad + r * grad_row);
        grad_factors(g, targets[r], all_weights, a[r], b[r], nll[r]);
    }
    simd::cross_entropy_grad_rows(row_block(slots_.self, slots_.out, begin, end), {a, b, nll, targets},
                                  dense_weights());
}

inline void ClassOp::cross_entropy_grad_row(int64_t row, float grad_scale, float all_weights) const {
    const int64_t lp = call_.row_start(slots_.self, row), lp_stride = call_.class_stride(slots_.self);
    const int64_t out = call_.row_start(slots_.out, row), out_stride = call_.class_stride(slots_.out);
    const int64_t t = call_.target(slots_.target, row);
    const int64_t classes = call_.classes();
    if (call_.ignored(t)) {
        for (int64_t c = 0; c < classes; ++c) call_.store(slots_.out, out + c * out_stride, 0.0f);
        return;
    }
    float g = grad_scale;
    if (!reduces()) {
        const int slot = NNPLUG_CROSS_ENTROPY_LOSS_GRAD_GRAD_LOSS;
        g = call_.load(slot, call_.row_start(slot, row));
    }
    const float nll = g * (1.0f - smoothing_) * class_weight(t);
    const float smooth = g * (smoothing_ / static_cast<float>(classes));
    for (int64_t c = 0; c < classes; ++c) {
        const float p = std::exp(call_.load(slots_.self, lp + c * lp_stride));
        float value = nll * (p - (c == t ? 1.0f : 0.0f));
        if (smoothing_ > 0) value += smooth * (p * all_weights - class_weight(c));
        call_.store(slots_.out, out + c * out_stride, value);
    }
}

// Runs fn(row) for every row of chunk c, and the chunk's rows.
template <typename Fn>
void for_chunk_rows(const ClassCall& call, int64_t chunk, Fn&& fn) {
    const int64_t begin = chunk * kClassRowChunk;
    const int64_t end = std::min(call.rows(), begin + kClassRowChunk);
    for (int64_t row = begin; row < end; ++row) fn(row);
}

// Targets up to this many rows are checked on the calling thread: the check reads one
// index a row, a few microseconds, less than a parallel pass costs to start.
constexpr int64_t kSerialTargetRows = 16384;

// The first bad target's refusal, or empty: the lowest row, whatever the split.
template <typename Parallel>
std::string check_targets(const ClassCall& call, int target_slot, Parallel&& parallel) {
    const int64_t chunks = call.chunks();
    if (call.rows() <= kSerialTargetRows) {  // cheaper than a parallel pass
        const int64_t row = call.first_bad_target(target_slot, 0, call.rows());
        return row < 0 ? std::string() : call.bad_target_message(row, call.target(target_slot, row));
    }
    ChunkValues<int64_t> bad(static_cast<size_t>(chunks), -1);
    parallel(chunks, [&](int64_t first, int64_t last) {
        for (int64_t c = first; c < last; ++c) {
            const int64_t begin = c * kClassRowChunk;
            bad[static_cast<size_t>(c)] =
                call.first_bad_target(target_slot, begin, std::min(call.rows(), begin + kClassRowChunk));
        }
    });
    for (const int64_t row : bad)
        if (row >= 0) return call.bad_target_message(row, call.target(target_slot, row));
    return {};
}

// Whether a cross-entropy call is a few rows of many classes (a vocabulary): each row's
// segments then go across the threads, merged in order, so the bits are one thread's.
inline bool wide_rows(const ClassOp& op) {
    return op.vector_chunks() && op.call().rows() < 8 && op.call().classes() >= 4 * simd::kLseSegment;
}

inline int64_t segment_count(const ClassCall& call) {
    return (call.classes() + simd::kLseSegment - 1) / simd::kLseSegment;
}

// One wide row of the forward: its segments' log-sum-exp, then their logProb, in parallel.
template <typename Parallel>
void wide_forward_row(const ClassOp& op, int64_t row, Parallel&& parallel, double& loss, double& weight) {
    const ClassCall& call = op.call();
    const ClassSlots slots = class_slots(op.op());
    const int lp_slot = NNPLUG_CROSS_ENTROPY_LOSS_LOG_PROB;
    const nnplug_tensor& in = call.operand(slots.self);
    const auto size = [&](int64_t s) {
        return std::min(simd::kLseSegment, call.classes() - s * simd::kLseSegment);
    };
    const auto at = [&](int slot, int64_t s) {
        return sdk::element_address_mutable(call.operand(slot),
                                            call.row_start(slot, row) + s * simd::kLseSegment);
    };
    std::vector<simd::LseState> states(static_cast<size_t>(segment_count(call)));
    parallel(segment_count(call), [&](int64_t first, int64_t last) {
        for (int64_t s = first; s < last; ++s)
            states[static_cast<size_t>(s)] = simd::row_lse(at(slots.self, s), in.dtype, size(s));
    });
    simd::LseState state;
    for (const simd::LseState& segment : states) state.merge(segment);
    const float lse = state.value();
    std::vector<double> sums(states.size());
    const float* weights = op.dense_weights();
    parallel(segment_count(call), [&](int64_t first, int64_t last) {
        for (int64_t s = first; s < last; ++s)
            sums[static_cast<size_t>(s)] = simd::log_softmax_row(
                at(slots.self, s), in.dtype, size(s), lse, at(lp_slot, s),
                weights != nullptr ? weights + s * simd::kLseSegment : nullptr, op.smooths());
    });
    double smooth = 0;
    for (const double sum : sums) smooth += sum;
    const int64_t t = call.target(slots.target, row);
    const bool counted = !call.ignored(t);
    weight = counted ? op.class_weight(t) : 0.0f;
    loss = counted ? op.cross_entropy_loss_of(static_cast<float>(weight),
                                              load_as_f32(at(slots.self, 0), in.dtype, t) - lse, smooth)
                   : 0.0;
    if (!op.reduces()) call.store(slots.out, call.row_start(slots.out, row), static_cast<float>(loss));
}

// One wide row of the gradient: its segments in parallel, then the target's element.
template <typename Parallel>
void wide_gradient_row(const ClassOp& op, int64_t row, float scale, float all_weights, Parallel&& parallel) {
    const ClassCall& call = op.call();
    const ClassSlots slots = class_slots(op.op());
    const nnplug_tensor& in = call.operand(slots.self);
    const int64_t target = call.target(slots.target, row);
    const int64_t t = call.ignored(target) ? -1 : target;
    float g = scale;
    if (!op.reduces()) {
        const int slot = NNPLUG_CROSS_ENTROPY_LOSS_GRAD_GRAD_LOSS;
        g = call.load(slot, call.row_start(slot, row));
    }
    float a, b, nll;
    op.grad_factors(g, t, all_weights, a, b, nll);
    const int64_t lp = call.row_start(slots.self, row), out = call.row_start(slots.out, row);
    const float* weights = op.dense_weights();
    parallel(segment_count(call), [&](int64_t first, int64_t last) {
        for (int64_t s = first; s < last; ++s) {
            const int64_t begin = s * simd::kLseSegment,
                          n = std::min(simd::kLseSegment, call.classes() - begin);
            char* into = sdk::element_address_mutable(call.operand(slots.out), out + begin);
            if (t < 0) {
                std::memset(into, 0,
                            static_cast<size_t>(n) * nnplug_dtype_size(call.operand(slots.out).dtype));
                continue;
            }
            simd::cross_entropy_grad_row(sdk::element_address(in, lp + begin), in.dtype, n, a, b,
                                         weights != nullptr ? weights + begin : nullptr, into);
        }
    });
    if (t < 0) return;
    const float p = std::exp(call.load(slots.self, lp + t));
    call.store(slots.out, out + t, a * p - b * op.class_weight(t) - nll);
}

// The rows chunk by chunk across the threads, each chunk's sums in row order; a wide call
// row by row, its segments across the threads.
template <typename Parallel>
void forward_rows(const ClassOp& op, Parallel&& parallel, ChunkValues<double>& losses,
                  ChunkValues<double>& weights) {
    const ClassCall& call = op.call();
    const bool cross_entropy = op.op() == NNPLUG_OP_CROSS_ENTROPY_LOSS;
    if (cross_entropy && wide_rows(op)) {
        for (int64_t row = 0; row < call.rows(); ++row) {  // fewer rows than a chunk: chunk 0, in row order
            double loss, weight;
            wide_forward_row(op, row, parallel, loss, weight);
            losses[0] += loss;
            weights[0] += weight;
        }
        return;
    }
    parallel(call.chunks(), [&](int64_t first, int64_t last) {
        for (int64_t c = first; c < last; ++c) {
            double loss_sum = 0, weight_sum = 0;
            const int64_t begin = c * kClassRowChunk, end = std::min(call.rows(), begin + kClassRowChunk);
            if (cross_entropy && op.vector_chunks())
                op.cross_entropy_chunk(begin, end, loss_sum, weight_sum);
            else if (!cross_entropy && op.nll_chunk(begin, end, loss_sum, weight_sum))
                ;  // the dense float32 rows, done
            else
                for_chunk_rows(call, c, [&](int64_t row) {
                    double loss, weight;
                    if (cross_entropy)
                        op.cross_entropy_row(row, loss, weight);
                    else
                        op.nll_row(row, loss, weight);
                    loss_sum += loss;
                    weight_sum += weight;
                });
            losses[static_cast<size_t>(c)] = loss_sum;
            weights[static_cast<size_t>(c)] = weight_sum;
        }
    });
}

// A reducing loss's outputs from its chunks' sums, added pairwise: the mean or sum, and
// NLLLoss's total weight.
inline void store_reduction(const ClassOp& op, const ChunkValues<double>& losses,
                            const ChunkValues<double>& weights) {
    if (!op.reduces()) return;
    const ClassCall& call = op.call();
    const ClassSlots slots = class_slots(op.op());
    const double loss = pairwise_sum(losses.data(), static_cast<int64_t>(losses.size()));
    const double total = pairwise_sum(weights.data(), static_cast<int64_t>(weights.size()));
    const double value = call.reduction() == NNPLUG_REDUCTION_MEAN ? loss / total : loss;
    call.store(slots.out, call.operand(slots.out).offset, static_cast<float>(value));
    if (op.op() != NNPLUG_OP_CROSS_ENTROPY_LOSS)
        call.store(NNPLUG_NLL_LOSS_TOTAL_WEIGHT, call.operand(NNPLUG_NLL_LOSS_TOTAL_WEIGHT).offset,
                   static_cast<float>(total));
}

// The same from each row's loss and weight (a kernel that keeps them per row): each chunk's
// rows added in row order, as forward_rows adds them.
inline void store_row_reduction(const ClassOp& op, const std::vector<double>& row_losses,
                                const std::vector<double>& row_weights) {
    const int64_t chunks = op.call().chunks();
    ChunkValues<double> losses(static_cast<size_t>(chunks), 0.0), weights(static_cast<size_t>(chunks), 0.0);
    for (size_t row = 0; row < row_losses.size(); ++row) {
        losses[row / kClassRowChunk] += row_losses[row];
        weights[row / kClassRowChunk] += row_weights[row];
    }
    store_reduction(op, losses, weights);
}

// The losses: per row (writing logProb and an unreduced loss), then the reduction and, for
// NLLLoss, the total weight, from chunk partials.
template <typename Parallel>
void run_class_forward(const ClassOp& op, Parallel&& parallel) {
    const int64_t chunks = op.call().chunks();
    ChunkValues<double> losses(static_cast<size_t>(chunks), 0.0), weights(static_cast<size_t>(chunks), 0.0);
    forward_rows(op, parallel, losses, weights);
    store_reduction(op, losses, weights);
}

// The factor a reduced gradient applies to every row: gradOutput, divided for mean by the
// total weight (NLLLoss: the one given; CrossEntropyLoss: the rows' own, summed here).
template <typename Parallel>
float class_grad_scale(const ClassOp& op, Parallel&& parallel) {
    const ClassCall& call = op.call();
    if (!op.reduces()) return 1.0f;
    const bool nll = op.op() != NNPLUG_OP_CROSS_ENTROPY_LOSS_GRAD;
    const int grad =
        nll ? int{NNPLUG_NLL_LOSS_BACKWARD_GRAD_OUTPUT} : int{NNPLUG_CROSS_ENTROPY_LOSS_GRAD_GRAD_LOSS};
    const float scale = call.load(grad, call.operand(grad).offset);
    if (call.reduction() != NNPLUG_REDUCTION_MEAN) return scale;
    if (nll) {
        const int total = NNPLUG_NLL_LOSS_BACKWARD_TOTAL_WEIGHT;
        return scale / call.load(total, call.operand(total).offset);
    }
    ChunkValues<double> weights(static_cast<size_t>(call.chunks()), 0.0);
    parallel(call.chunks(), [&](int64_t first, int64_t last) {
        for (int64_t c = first; c < last; ++c) {
            double sum = 0;
            for_chunk_rows(call, c, [&](int64_t row) { sum += op.row_weight(row); });
            weights[static_cast<size_t>(c)] = sum;
        }
    });
    return static_cast<float>(scale / pairwise_sum(weights.data(), call.chunks()));
}

template <typename Parallel>
void run_class_backward(const ClassOp& op, Parallel&& parallel) {
    const ClassCall& call = op.call();
    const bool nll = op.op() != NNPLUG_OP_CROSS_ENTROPY_LOSS_GRAD;
    const float scale = class_grad_scale(op, parallel);
    const float all_weights = nll ? 0.0f : static_cast<float>(op.all_class_weights());
    if (!nll && wide_rows(op)) {
        for (int64_t row = 0; row < call.rows(); ++row)
            wide_gradient_row(op, row, scale, all_weights, parallel);
        return;
    }
    parallel(call.chunks(), [&](int64_t first, int64_t last) {
        for (int64_t c = first; c < last; ++c) {
            if (!nll && op.vector_chunks()) {
                op.cross_entropy_grad_chunk(
                    c * kClassRowChunk, std::min(call.rows(), (c + 1) * kClassRowChunk), scale, all_weights);
                continue;
            }
            if (nll && op.nll_backward_chunk(c * kClassRowChunk,
                                             std::min(call.rows(), (c + 1) * kClassRowChunk), scale))
                continue;
            for_chunk_rows(call, c, [&](int64_t row) {
                if (nll)
                    op.nll_backward_row(row, scale);
                else
                    op.cross_entropy_grad_row(row, scale, all_weights);
            });
        }
    });
}

// A reducing NLLLoss over dense targets in one pass: each chunk checks its targets, then sums
// its rows (the forward writes nothing before the reduction, so a refusal still leaves every
// output untouched). False when the call is not one nll_chunk takes.
template <typename Parallel>
bool fused_nll_forward(const ClassOp& op, Parallel&& parallel, std::string& refusal) {
    const ClassCall& call = op.call();
    const int target_slot = class_slots(op.op()).target;
    const bool nll_forward = op.op() == NNPLUG_OP_NLL_LOSS || op.op() == NNPLUG_OP_NLL_LOSS_2D;
    if (!nll_forward || !op.nll_dense()) return false;
    const auto chunks = static_cast<size_t>(call.chunks());
    ChunkValues<double> losses(chunks, 0.0), weights(chunks, 0.0);
    ChunkValues<int64_t> bad(chunks, -1);
    parallel(call.chunks(), [&](int64_t first, int64_t last) {
        for (int64_t c = first; c < last; ++c) {
            const int64_t begin = c * kClassRowChunk, end = std::min(call.rows(), begin + kClassRowChunk);
            const auto k = static_cast<size_t>(c);
            bad[k] = call.first_bad_target(target_slot, begin, end);
            double loss = 0, weight = 0;  // in registers, not through the vectors
            if (bad[k] < 0) op.nll_chunk(begin, end, loss, weight);
            losses[k] = loss;
            weights[k] = weight;
        }
    });
    for (const int64_t row : bad)
        if (row >= 0) {
            refusal = call.bad_target_message(row, call.target(target_slot, row));
            return true;
        }
    store_reduction(op, losses, weights);
    return true;
}

// Runs a class-axis op. parallel(count, body) calls body(begin, end) over [0, count) in any
// split. Returns empty on success, else the refusal (one line); nothing is written then.
template <typename Parallel>
std::string run_class_op(const nnplug_op_desc& desc, Parallel&& parallel) {
    const ClassOp op(desc);
    if (!op.call().valid()) return "the descriptor has no class axis with classes";
    std::string refusal;
    if (fused_nll_forward(op, parallel, refusal)) return refusal;
    refusal = check_targets(op.call(), class_slots(desc.op).target, parallel);
    if (!refusal.empty()) return refusal;
    const bool backward = desc.op == NNPLUG_OP_NLL_LOSS_BACKWARD ||
                          desc.op == NNPLUG_OP_NLL_LOSS_2D_BACKWARD ||
                          desc.op == NNPLUG_OP_CROSS_ENTROPY_LOSS_GRAD;
    if (backward)
        run_class_backward(op, parallel);
    else
        run_class_forward(op, parallel);
    return {};
}

}  // namespace nnplug::common
