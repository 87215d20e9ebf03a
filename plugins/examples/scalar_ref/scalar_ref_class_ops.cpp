// scalar_ref's ops with a class axis, written from docs/ops/nll_loss.md and
// docs/ops/cross_entropy_loss.md against the SDK headers only: a second implementation of the
// row model, independent of the in-tree backends' on purpose, so that the two can be compared.
//
// A call's dims are [outer..., C, inner...], class_axis naming C. A row is one position of the
// other dims, taken in row-major order; an operand's row starts at its offset plus that
// position's strides, and its class c lies c * strides[class_axis] further. A target or a
// per-row output has stride 0 along the class axis, a weight stride 0 along every other dim,
// and a reduced operand is its one element at offset (its strides are all 0), so the same
// walk serves them all. Each element is computed in float32; sums are taken in double, in row
// order, and each result is rounded once into its output's dtype.
#include <nnplug/dtype_convert.h>
#include <nnplug/plugin_support.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "scalar_ref_walk.h"

namespace sdk = nnplug::sdk;

namespace scalar_ref {
namespace {

// The slots of the operands every class-axis op has: its (log-)probabilities or logits, the
// target, the weight and the output written per row or per element.
struct Slots {
    int input, target, weight, out;
};

Slots slots_of(int32_t op) {
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

// A target element as the class index it holds (int64, int32 or uint8).
int64_t class_index(const nnplug_tensor& t, int64_t element) {
    switch (t.dtype) {
        case NNPLUG_DTYPE_I32:
#ifdef SCALAR_REF_BUG_INT32_AS_INT64  // BUG: int32 targets read as int64 elements
            return static_cast<const int64_t*>(t.data)[element];
#endif
            return static_cast<const int32_t*>(t.data)[element];
        case NNPLUG_DTYPE_U8:
            return static_cast<const uint8_t*>(t.data)[element];
        default:
            return static_cast<const int64_t*>(t.data)[element];
    }
}

struct Row;

// One call seen as `rows` rows of `classes` classes, with the attributes every op reads.
struct Call {
    explicit Call(const nnplug_op_desc& d)
        : desc(d), slots(slots_of(d.op)), axis(nnplug_desc_class_axis(&d)) {
        if (axis < 0 || axis >= d.ndim) return;  // not a class-axis descriptor: classes stays 0
        classes = d.dims[axis];
        for (int32_t k = 0; k < d.ndim; ++k)
            if (k != axis) rows *= d.dims[k];
        const nnplug_attr* attr = nnplug_find_attr(&d, NNPLUG_ATTR_IGNORE_INDEX);
        has_ignore = attr != nullptr && attr->type == NNPLUG_ATTR_I64;  // absent: nothing is ignored
        ignore = has_ignore ? attr->value.i64 : 0;
        smoothing = static_cast<float>(nnplug_attr_f64(&d, NNPLUG_ATTR_LABEL_SMOOTHING, 0.0));
    }

    const nnplug_op_desc& desc;
    Slots slots;
    int32_t axis;
    int64_t classes = 0, rows = 1;
    bool has_ignore = false;
    int64_t ignore = 0;
    float smoothing = 0.0f;  // float32, as every other operand of the computation

    bool reduces() const { return sdk::reduction(desc) != NNPLUG_REDUCTION_NONE; }
    bool mean() const { return sdk::reduction(desc) == NNPLUG_REDUCTION_MEAN; }
    bool ignored(int64_t t) const { return has_ignore && t == ignore; }
    bool in_range(int64_t t) const { return t >= 0 && t < classes; }

    float load(int slot, int64_t element) const {
        const nnplug_tensor& t = desc.operands[slot];
        return nnplug::load_as_f32(t.data, t.dtype, element);
    }
    void store(int slot, int64_t element, float value) const {
        const nnplug_tensor& t = desc.operands[slot];
        nnplug::store_from_f32(t.data, t.dtype, element, value);
    }
    // A reduced operand's one element.
    float load_reduced(int slot) const { return load(slot, desc.operands[slot].offset); }
    void store_reduced(int slot, float value) const { store(slot, desc.operands[slot].offset, value); }

    // The weight of class c; an absent (optional) weight is 1 for every class.
    float weight(int64_t c) const {
        const nnplug_tensor& w = desc.operands[slots.weight];
        if (!nnplug_operand_present(&desc, slots.weight)) return 1.0f;
        return nnplug::load_as_f32(w.data, w.dtype, w.offset + c * w.strides[axis]);
    }

    int64_t target(const Row& row) const;

    // The refusal of a target that is neither a class nor ignoreIndex, worded as the op's page
    // shows it (the runtime prefixes the API's name).
    std::string refusal(int64_t row, int64_t value) const {
        std::string text = "target element " + std::to_string(row) + " is " + std::to_string(value) +
                           ", not a class index in [0, " + std::to_string(classes) + ")";
        if (has_ignore) text += " nor ignoreIndex " + std::to_string(ignore);
        return text;
    }
};

// A row: a multi-dim index over every dim but the class axis (whose index stays 0), and the
// row's number in row-major order.
struct Row {
    const Call& call;
    int64_t number = 0;
    int64_t index[NNPLUG_MAX_DIMS] = {};

    // The element (from data) of class 0 of slot in this row: the one element of a reduced
    // operand, whose strides are 0.
    int64_t start(int slot) const {
        const nnplug_tensor& t = call.desc.operands[slot];
        int64_t element = t.offset;
        for (int32_t k = 0; k < call.desc.ndim; ++k) element += index[k] * t.strides[k];
        return element;
    }
    // The element of class c of slot in this row.
    int64_t at(int slot, int64_t c) const {
        return start(slot) + c * call.desc.operands[slot].strides[call.axis];
    }

    void next() {
        ++number;
        for (int32_t k = call.desc.ndim - 1; k >= 0; --k) {
            if (k == call.axis) continue;
            if (++index[k] < call.desc.dims[k]) return;
            index[k] = 0;
        }
    }
};

int64_t Call::target(const Row& row) const {
    const int64_t t = class_index(desc.operands[slots.target], row.start(slots.target));
#ifdef SCALAR_REF_BUG_READ_OUT_OF_RANGE  // BUG: no target is refused: one outside the classes reads a class
    if (!ignored(t)) return std::clamp<int64_t>(t, 0, classes - 1);  // (clamped, so as not to crash)
#endif
    return t;
}

// Calls fn(row) for every row, in row-major order.
template <typename Fn>
void for_each_row(const Call& call, Fn&& fn) {
    for (Row row{call}; row.number < call.rows; row.next()) fn(static_cast<const Row&>(row));
}

// The refusal of the first row whose target is neither a class index nor ignoreIndex, or
// empty. Run before anything is written, so that a refused call writes nothing.
std::string check_targets(const Call& call) {
    for (Row row{call}; row.number < call.rows; row.next()) {
        const int64_t t = call.target(row);
        if (!call.in_range(t) && !call.ignored(t)) return call.refusal(row.number, t);
    }
    return {};
}

// A row's share of the mean's divisor: the weight its target selects, none when ignored.
double divisor_share(const Call& call, int64_t t) {
#ifdef SCALAR_REF_BUG_IGNORED_IN_DIVISOR  // BUG: an ignored row's weight counted too (its class clamped)
    return call.weight(std::clamp<int64_t>(t, 0, call.classes - 1));
#endif
#ifdef SCALAR_REF_BUG_UNWEIGHTED_DIVISOR  // BUG: the mean divides by the count of rows, not their weight
    return call.ignored(t) ? 0.0 : 1.0;
#endif
    return call.ignored(t) ? 0.0 : call.weight(t);
}

// Label smoothing's share of each class: ε spread over all C classes.
double smoothing_share(const Call& call) {
#ifdef SCALAR_REF_BUG_SMOOTHING_COUNT  // BUG: ε spread over C - 1 classes
    return call.smoothing / static_cast<double>(call.classes - 1);
#endif
    return call.smoothing / static_cast<double>(call.classes);
}

// NLLLoss and NLLLoss2d: l = -w[t] * self[t] per row, 0 for an ignored row.
void nll_loss(const Call& call) {
    const Slots& s = call.slots;
    double loss = 0, total = 0;
    for_each_row(call, [&](const Row& row) {
        const int64_t t = call.target(row);
        const float l = call.ignored(t) ? 0.0f : -(call.weight(t) * call.load(s.input, row.at(s.input, t)));
        if (!call.reduces()) call.store(s.out, row.start(s.out), l);
        loss += l;
        total += divisor_share(call, t);
    });
    if (!call.reduces()) return;  // totalWeightOut too is left alone for none, as in CANN
    call.store_reduced(s.out, static_cast<float>(call.mean() ? loss / total : loss));
    call.store_reduced(NNPLUG_NLL_LOSS_TOTAL_WEIGHT, static_cast<float>(total));
}

// Their backwards: -w[t] * g at class t, 0 at every other class and in an ignored row.
void nll_loss_backward(const Call& call) {
    const Slots& s = call.slots;
    const int grad = NNPLUG_NLL_LOSS_BACKWARD_GRAD_OUTPUT;
    float scale = call.reduces() ? call.load_reduced(grad) : 1.0f;
    // The mean divides by the totalWeight it is given (the forward's), never recomputed.
    if (call.mean()) scale /= call.load_reduced(NNPLUG_NLL_LOSS_BACKWARD_TOTAL_WEIGHT);
    for_each_row(call, [&](const Row& row) {
        const int64_t t = call.target(row);
        for (int64_t c = 0; c < call.classes; ++c) call.store(s.out, row.at(s.out, c), 0.0f);
        if (call.ignored(t)) return;
        const float g = call.reduces() ? scale : call.load(grad, row.start(grad));
        call.store(s.out, row.at(s.out, t), -(call.weight(t) * g));
    });
}

// The log-sum-exp of a row's logits in one pass: the running max keeps exp's argument at or
// below 0, so logits near 100 do not overflow float32.
float log_sum_exp(const Call& call, const Row& row, int slot) {
#ifdef SCALAR_REF_BUG_NO_MAX_IN_LSE  // BUG: log(sum(exp(x))) in float32 with no max: exp(100) is inf
    float plain = 0.0f;
    for (int64_t c = 0; c < call.classes; ++c) plain += std::exp(call.load(slot, row.at(slot, c)));
    return std::log(plain);
#endif
    float max = -INFINITY;
    double sum = 0;  // of exp(x - max)
    for (int64_t c = 0; c < call.classes; ++c) {
        const float x = call.load(slot, row.at(slot, c));
        if (x > max) {
            sum = sum * std::exp(static_cast<double>(max) - x) + 1.0;  // rescaled to the new max
            max = x;
        } else if (x != -INFINITY) {  // adds 0; skipped so that -inf - -inf does not make a NaN
            sum += std::exp(static_cast<double>(x) - max);
        }
    }
    return static_cast<float>(max + std::log(sum));
}

// One row of CrossEntropyLoss: writes logProb = x - lse and returns the row's loss,
// (1 - ε) (-w[t] logProb[t]) - ε/C Σ_c w[c] logProb[c], or 0 when the row is not counted.
double cross_entropy_row(const Call& call, const Row& row) {
    const int in = call.slots.input, lp = NNPLUG_CROSS_ENTROPY_LOSS_LOG_PROB;
    const float lse = log_sum_exp(call, row, in);
    const int64_t t = call.target(row);
    float target_lp = 0.0f;
    double smooth = 0;  // Σ_c w[c] logProb[c]
    for (int64_t c = 0; c < call.classes; ++c) {
        const float value = call.load(in, row.at(in, c)) - lse;
        call.store(lp, row.at(lp, c), value);
        if (c == t) target_lp = value;
        smooth += static_cast<double>(call.weight(c)) * value;
    }
    if (call.ignored(t)) return 0.0;
    return (1.0 - call.smoothing) * -(static_cast<double>(call.weight(t)) * target_lp) -
           smoothing_share(call) * smooth;
}

// CrossEntropyLoss; the mean divides both terms by the counted rows' weight. zlossOut and
// lseForZlossOut are not in the descriptor: never written.
void cross_entropy_loss(const Call& call) {
    const int out = call.slots.out;
    double loss = 0, total = 0;
    for_each_row(call, [&](const Row& row) {
        const double l = cross_entropy_row(call, row);
        if (!call.reduces()) call.store(out, row.start(out), static_cast<float>(l));
        loss += l;
        total += divisor_share(call, call.target(row));
    });
    if (call.reduces()) call.store_reduced(out, static_cast<float>(call.mean() ? loss / total : loss));
}

// The gradient every row of a reduced CrossEntropyLossGrad scales by: gradLoss, divided for
// mean by the counted rows' weight, recomputed here from target and weight (no operand
// carries it).
float cross_entropy_grad_scale(const Call& call) {
    if (!call.reduces()) return 1.0f;
    const float g = call.load_reduced(NNPLUG_CROSS_ENTROPY_LOSS_GRAD_GRAD_LOSS);
    if (!call.mean()) return g;
    double total = 0;
    for_each_row(call, [&](const Row& row) { total += divisor_share(call, call.target(row)); });
    return static_cast<float>(g / total);
}

// One row of the gradient from logProb, p = exp(logProb) (not renormalised):
// g ((1 - ε) w[t] (p[c] - [c = t]) + ε/C (p[c] Σ_k w[k] - w[c])).
void cross_entropy_grad_row(const Call& call, const Row& row, float scale, float all_weights) {
    const int lp = call.slots.input, out = call.slots.out, grad = NNPLUG_CROSS_ENTROPY_LOSS_GRAD_GRAD_LOSS;
    const int64_t t = call.target(row);
    if (call.ignored(t)) {  // zeros, whatever the scale: all rows ignored gives 0, not 0 * NaN
        for (int64_t c = 0; c < call.classes; ++c) call.store(out, row.at(out, c), 0.0f);
        return;
    }
    const float g = call.reduces() ? scale : call.load(grad, row.start(grad));
    const float nll = g * (1.0f - call.smoothing) * call.weight(t);
    const float smooth = g * static_cast<float>(smoothing_share(call));
    for (int64_t c = 0; c < call.classes; ++c) {
        const float p = std::exp(call.load(lp, row.at(lp, c)));
        float value = nll * (p - (c == t ? 1.0f : 0.0f));
        // Without smoothing the term is 0 · (...): skipping it leaves the unsmoothed bits as they are.
        if (call.smoothing > 0) value += smooth * (p * all_weights - call.weight(c));
        call.store(out, row.at(out, c), value);
    }
}

void cross_entropy_loss_grad(const Call& call) {
    const float scale = cross_entropy_grad_scale(call);
    double all_weights = 0;
    for (int64_t c = 0; c < call.classes; ++c) all_weights += call.weight(c);
    for_each_row(call, [&](const Row& row) {
        cross_entropy_grad_row(call, row, scale, static_cast<float>(all_weights));
    });
}

// Every target is checked first: a class index outside [0, C) that is not ignoreIndex refuses
// the call with NNPLUG_ERR_INVALID_ARGUMENT and a message for last_error(), and nothing is
// written.
nnplug_status run_class_op(const nnplug_op_desc& desc) {
    const Call call(desc);
    if (call.classes <= 0)
        return sdk::fail(NNPLUG_ERR_INVALID_ARGUMENT, "the descriptor has no class axis with classes");
    const std::string refusal = check_targets(call);
    if (!refusal.empty()) return sdk::fail(NNPLUG_ERR_INVALID_ARGUMENT, refusal);
    switch (desc.op) {
        case NNPLUG_OP_NLL_LOSS:
        case NNPLUG_OP_NLL_LOSS_2D:
            nll_loss(call);
            break;
        case NNPLUG_OP_NLL_LOSS_BACKWARD:
        case NNPLUG_OP_NLL_LOSS_2D_BACKWARD:
            nll_loss_backward(call);
            break;
        case NNPLUG_OP_CROSS_ENTROPY_LOSS:
            cross_entropy_loss(call);
            break;
        case NNPLUG_OP_CROSS_ENTROPY_LOSS_GRAD:
            cross_entropy_loss_grad(call);
            break;
        default:
            return sdk::fail(NNPLUG_ERR_UNSUPPORTED, "op " + std::to_string(desc.op) + " has no class axis");
    }
    return NNPLUG_OK;
}

const Registration kClassOps{
    {NNPLUG_OP_NLL_LOSS, NNPLUG_OP_NLL_LOSS_2D, NNPLUG_OP_NLL_LOSS_BACKWARD, NNPLUG_OP_NLL_LOSS_2D_BACKWARD,
     NNPLUG_OP_CROSS_ENTROPY_LOSS, NNPLUG_OP_CROSS_ENTROPY_LOSS_GRAD},
    run_class_op};

}  // namespace
}  // namespace scalar_ref
