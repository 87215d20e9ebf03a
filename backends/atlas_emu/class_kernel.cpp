#include "class_kernel.h"

#include <nnplug/dtype_convert.h>
#include <nnplug/plugin_support.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "chrome_trace.h"
#include "class_ops.h"
#include "class_rows_tile.h"
#include "core_records.h"
#include "unified_buffer.h"

namespace nnplug::emu {
namespace {

// The Unified Buffer's layout for tiles of `tile` classes: the input tile, the output tile
// (both of the row's dtype) and a float32 tile of weights, each 32-byte aligned.
struct UbLayout {
    int64_t in = 0, out = 0, weights = 0, bytes = 0;
    UbLayout(int64_t tile, int64_t element) {
        UbRegions regions;
        in = regions.take(tile * element);
        out = regions.take(tile * element);
        weights = regions.take(tile * 4);
        bytes = regions.bytes;
    }
};

// One launch: the rows of each core, tile by tile through its Unified Buffer.
class ClassLaunch {
public:
    ClassLaunch(const nnplug_op_desc& desc, const ClassTiling& tiling, const KernelOptions& options)
        : desc_(desc),
          tiling_(tiling),
          options_(options),
          op_(desc),
          call_(op_.call()),
          slots_(common::class_slots(desc.op)),
          element_(static_cast<int64_t>(nnplug_dtype_size(call_.operand(slots_.self).dtype))),
          layout_(tiling.tile_elements, element_),
          losses_(static_cast<size_t>(call_.rows())),
          weights_(static_cast<size_t>(call_.rows())),
          records_(tiling.block_dim) {}

    bool forward() const { return desc_.op == NNPLUG_OP_CROSS_ENTROPY_LOSS; }
    const common::ClassOp& op() const { return op_; }
    void set_gradient(float scale, float all_weights) {
        grad_scale_ = scale;
        all_weights_ = all_weights;
    }

    void run_core(int core) {
        const double begin_us = host_microseconds();
        UnifiedBuffer ub(core_storage(options_.ub_bytes), options_.ub_bytes, options_.soc_name);
        const int64_t begin = core * tiling_.rows_per_core;
        const int64_t end = std::min(call_.rows(), begin + tiling_.rows_per_core);
        bool ok = ub.reserve(layout_.bytes);
        for (int64_t row = begin; ok && row < end; ++row)
            ok = forward() ? forward_row(ub, row) : gradient_row(ub, row);
        records_.record(ub, {core, forward() ? "CrossEntropyLoss" : "CrossEntropyLossGrad", begin_us,
                             host_microseconds(), (end - begin) * tiling_.tiles_per_row});
    }

    // The reduced loss (and nothing else) from the rows' values, in the row model's chunks.
    void finish_forward() const { common::store_row_reduction(op_, losses_, weights_); }
    const CoreRecords& records() const { return records_; }

private:
    const char* global(int slot, int64_t row, int64_t first_class) const {
        const nnplug_tensor& t = call_.operand(slot);
        return sdk::element_address(t, call_.row_start(slot, row) + first_class * call_.class_stride(slot));
    }
    char* global_out(int slot, int64_t row, int64_t first_class) const {
        const nnplug_tensor& t = call_.operand(slot);
        return sdk::element_address_mutable(
            t, call_.row_start(slot, row) + first_class * call_.class_stride(slot));
    }
    int64_t tile_size(int64_t k) const {
        return std::min(tiling_.tile_elements, call_.classes() - k * tiling_.tile_elements);
    }
    // The weights of tile k into the UB (the dense copy stands for the weight operand,
    // staged in the workspace as CANN's tiling would); null without weights.
    const float* load_weights(UnifiedBuffer& ub, int64_t k, bool& ok) const {
        if (op_.dense_weights() == nullptr) return nullptr;
        ok = ok &&
             ub.copy_in(layout_.weights, op_.dense_weights() + k * tiling_.tile_elements, tile_size(k) * 4);
        return ub.at<float>(layout_.weights);
    }
    bool forward_row(UnifiedBuffer& ub, int64_t row);
    bool gradient_row(UnifiedBuffer& ub, int64_t row);

    const nnplug_op_desc& desc_;
    const ClassTiling& tiling_;
    const KernelOptions& options_;
    common::ClassOp op_;
    const common::ClassCall& call_;
    common::ClassSlots slots_;
    int64_t element_;
    UbLayout layout_;
    std::vector<double> losses_, weights_;  // per row (the forward)
    float grad_scale_ = 1, all_weights_ = 0;
    CoreRecords records_;
};

// Pass 1 carries the log-sum-exp from tile to tile; pass 2 writes logProb (a row of one
// tile is copied in once for both).
bool ClassLaunch::forward_row(UnifiedBuffer& ub, int64_t row) {
    const int32_t dtype = call_.operand(slots_.self).dtype;
    const int lp_slot = NNPLUG_CROSS_ENTROPY_LOSS_LOG_PROB;
    bool ok = true;
    simd::LseState state;
    for (int64_t k = 0; ok && k < tiling_.tiles_per_row; ++k) {
        ok = ub.copy_in(layout_.in, global(slots_.self, row, k * tiling_.tile_elements),
                        tile_size(k) * element_);
        if (ok) simd::lse_update(ub.at<char>(layout_.in), dtype, tile_size(k), state);
    }
    const float lse = state.value();
    const int64_t target = call_.target(slots_.target, row);
    const bool counted = !call_.ignored(target);
    double smooth = 0;
    float target_lp = 0;
    for (int64_t k = 0; ok && k < tiling_.tiles_per_row; ++k) {
        const int64_t first = k * tiling_.tile_elements, n = tile_size(k);
        if (tiling_.tiles_per_row > 1)
            ok = ub.copy_in(layout_.in, global(slots_.self, row, first), n * element_);
        const float* weights = op_.smooths() ? load_weights(ub, k, ok) : nullptr;
        if (!ok) break;
        smooth += simd::log_softmax_row(ub.at<char>(layout_.in), dtype, n, lse, ub.at<char>(layout_.out),
                                        weights, op_.smooths());
        if (counted && target >= first && target < first + n)
            target_lp = load_as_f32(ub.at<char>(layout_.in), dtype, target - first) - lse;
        ok = ub.copy_out(global_out(lp_slot, row, first), layout_.out, n * element_);
    }
    const float w = counted ? op_.class_weight(target) : 0.0f;
    const double loss = counted ? op_.cross_entropy_loss_of(w, target_lp, smooth) : 0.0;
    if (!op_.reduces()) call_.store(slots_.out, call_.row_start(slots_.out, row), static_cast<float>(loss));
    losses_[static_cast<size_t>(row)] = loss;
    weights_[static_cast<size_t>(row)] = w;
    return ok;
}

bool ClassLaunch::gradient_row(UnifiedBuffer& ub, int64_t row) {
    const int32_t dtype = call_.operand(slots_.self).dtype;
    const int64_t target = call_.target(slots_.target, row);
    const int64_t t = call_.ignored(target) ? -1 : target;
    float g = grad_scale_;
    if (!op_.reduces()) {
        const int slot = NNPLUG_CROSS_ENTROPY_LOSS_GRAD_GRAD_LOSS;
        g = call_.load(slot, call_.row_start(slot, row));
    }
    float a, b, nll;
    op_.grad_factors(g, t, all_weights_, a, b, nll);
    bool ok = true;
    for (int64_t k = 0; ok && k < tiling_.tiles_per_row; ++k) {
        const int64_t first = k * tiling_.tile_elements, n = tile_size(k);
        char* out = ub.at<char>(layout_.out);
        if (t < 0) {
            std::memset(out, 0, static_cast<size_t>(n * element_));  // an ignored row: zeros
        } else {
            ok = ub.copy_in(layout_.in, global(slots_.self, row, first), n * element_);
            const float* weights = load_weights(ub, k, ok);
            if (!ok) break;
            simd::cross_entropy_grad_row(ub.at<char>(layout_.in), dtype, n, a, b, weights, out);
            if (t >= first && t < first + n) {
                const float p = std::exp(load_as_f32(ub.at<char>(layout_.in), dtype, t - first));
                store_from_f32(out, dtype, t - first, a * p - b * op_.class_weight(t) - nll);
            }
        }
        ok = ub.copy_out(global_out(slots_.out, row, first), layout_.out, n * element_);
    }
    return ok;
}

}  // namespace

bool runs_in_class_kernel(const nnplug_op_desc& desc) {
    if (desc.op != NNPLUG_OP_CROSS_ENTROPY_LOSS && desc.op != NNPLUG_OP_CROSS_ENTROPY_LOSS_GRAD) return false;
    const common::ClassOp op(desc);
    return op.call().valid() && op.vector_chunks();
}

ClassTiling plan_class(const nnplug_op_desc& desc, const DeviceLimits& limits) {
    const common::ClassCall call(desc);
    const int64_t element =
        static_cast<int64_t>(nnplug_dtype_size(call.operand(common::class_slots(desc.op).self).dtype));
    ClassTiling tiling;
    tiling.block_dim =
        static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(limits.vector_cores, call.rows())));
    tiling.rows_per_core = (call.rows() + tiling.block_dim - 1) / tiling.block_dim;
    // The largest tile of whole log-sum-exp blocks the UB holds with its output and weights.
    const int64_t per_class = 2 * element + 4 + 1;  // the +1 leaves room for the alignment
    const int64_t max_tile =
        std::max<int64_t>(simd::kLseBlock, limits.ub_bytes / per_class / simd::kLseBlock * simd::kLseBlock);
    tiling.tile_elements = call.classes() <= max_tile ? call.classes() : max_tile;
    tiling.tiles_per_row = (call.classes() + tiling.tile_elements - 1) / tiling.tile_elements;
    tiling.ub_bytes = UbLayout(tiling.tile_elements, element).bytes;
    return tiling;
}

std::string run_class_kernel(const nnplug_op_desc& desc, const ClassTiling& tiling,
                             const KernelOptions& options, CorePool& cores, LaunchStats& stats) {
    ClassLaunch launch(desc, tiling, options);
    const common::ClassOp& op = launch.op();
    std::string refusal = common::check_targets(op.call(), common::class_slots(desc.op).target, serial);
    if (!refusal.empty()) return refusal;
    if (!launch.forward())
        launch.set_gradient(common::class_grad_scale(op, serial), static_cast<float>(op.all_class_weights()));
    cores.run(tiling.block_dim, [&](int core) { launch.run_core(core); });
    launch.records().add_stats(stats);
    if (std::string fault = launch.records().first_fault(); !fault.empty()) return fault;
    if (launch.forward()) launch.finish_forward();
    return {};
}

}  // namespace nnplug::emu
