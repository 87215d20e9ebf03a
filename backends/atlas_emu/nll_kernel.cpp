#include "nll_kernel.h"

#include <nnplug/dtype_convert.h>
#include <nnplug/plugin_support.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "chrome_trace.h"
#include "class_ops.h"
#include "core_records.h"
#include "unified_buffer.h"

namespace nnplug::emu {
namespace {

bool is_nll_op(int32_t op) {
    return op == NNPLUG_OP_NLL_LOSS || op == NNPLUG_OP_NLL_LOSS_2D || op == NNPLUG_OP_NLL_LOSS_BACKWARD ||
           op == NNPLUG_OP_NLL_LOSS_2D_BACKWARD;
}

bool is_forward(int32_t op) {
    return op == NNPLUG_OP_NLL_LOSS || op == NNPLUG_OP_NLL_LOSS_2D;
}

const char* kernel_name(int32_t op) {
    switch (op) {
        case NNPLUG_OP_NLL_LOSS:
            return "NLLLoss";
        case NNPLUG_OP_NLL_LOSS_2D:
            return "NLLLoss2d";
        case NNPLUG_OP_NLL_LOSS_BACKWARD:
            return "NLLLossGrad";
        default:
            return "NLLLoss2dGrad";
    }
}

int64_t size_of(const nnplug_tensor& t) {
    return static_cast<int64_t>(nnplug_dtype_size(t.dtype));
}

// Whether t walks desc's [outer, C, inner] as the layout `strides` says (dims of one element
// may have any stride).
bool laid_out(const nnplug_op_desc& desc, const nnplug_tensor& t, const int64_t (&strides)[3]) {
    if (t.flags & NNPLUG_OPERAND_REDUCED) return false;
    for (int k = 0; k < 3; ++k)
        if (desc.dims[k] > 1 && t.strides[k] != strides[k]) return false;
    return true;
}

// An operand with one element per row (a target, an unreduced loss or gradOutput), row-major.
bool dense_rows(const nnplug_op_desc& desc, int slot) {
    return laid_out(desc, desc.operands[slot], {desc.dims[2], 0, 1});
}

// The bytes per row (targets and losses or gradOutput) and per output element of a call.
struct NllSizes {
    int64_t target = 0, value = 0, out = 0;
    explicit NllSizes(const common::ClassCall& call) {
        const int32_t op = call.desc().op;
        const common::ClassSlots slots = common::class_slots(op);
        target = size_of(call.operand(slots.target));
        const bool reduces = call.reduction() != NNPLUG_REDUCTION_NONE;
        if (is_forward(op)) {
            value = reduces ? 0 : size_of(call.operand(slots.out));
        } else {
            value = reduces ? 0 : size_of(call.operand(NNPLUG_NLL_LOSS_BACKWARD_GRAD_OUTPUT));
            out = size_of(call.operand(slots.out));
        }
    }
};

// The Unified Buffer's layout: a tile of targets, one of losses or gradOutput, a 32-byte block
// each for the gathered self element and weight, and the backward's output tile.
struct NllLayout {
    int64_t targets = 0, values = 0, gather = 0, weight = 0, out = 0, bytes = 0;
    NllLayout(const NllTiling& tiling, const NllSizes& sizes) {
        UbRegions regions;
        targets = regions.take(tiling.rows_per_tile * sizes.target);
        values = regions.take(tiling.rows_per_tile * sizes.value);
        gather = regions.take(UnifiedBuffer::kCopyUnit);
        weight = regions.take(UnifiedBuffer::kCopyUnit);
        out = regions.take(sizes.out > 0 ? tiling.tile_elements * sizes.out : 0);
        bytes = regions.bytes;
    }
};

int64_t target_in(const char* tile, int32_t dtype, int64_t i) {
    switch (dtype) {
        case NNPLUG_DTYPE_I32:
            return reinterpret_cast<const int32_t*>(tile)[i];
        case NNPLUG_DTYPE_U8:
            return reinterpret_cast<const uint8_t*>(tile)[i];
        default:
            return reinterpret_cast<const int64_t*>(tile)[i];
    }
}

// One launch: each core's rows, a tile of rows at a time through its Unified Buffer.
class NllLaunch {
public:
    NllLaunch(const nnplug_op_desc& desc, const NllTiling& tiling, const KernelOptions& options)
        : tiling_(tiling),
          options_(options),
          op_(desc),
          call_(op_.call()),
          slots_(common::class_slots(desc.op)),
          sizes_(call_),
          layout_(tiling, sizes_),
          forward_(is_forward(desc.op)),
          records_(tiling.block_dim) {
        if (forward_) {
            losses_.resize(static_cast<size_t>(call_.rows()));
            weights_.resize(static_cast<size_t>(call_.rows()));
        }
    }

    bool forward() const { return forward_; }
    const common::ClassOp& op() const { return op_; }
    const CoreRecords& records() const { return records_; }
    void set_grad_scale(float scale) { grad_scale_ = scale; }
    void finish_forward() const { common::store_row_reduction(op_, losses_, weights_); }

    void run_core(int core) {
        const double begin_us = host_microseconds();
        UnifiedBuffer ub(core_storage(options_.ub_bytes), options_.ub_bytes, options_.soc_name);
        const int64_t begin = core * tiling_.rows_per_core;
        const int64_t end = std::min(call_.rows(), begin + tiling_.rows_per_core);
        int64_t tiles = 0;
        bool ok = ub.reserve(layout_.bytes);
        for (int64_t row = begin; ok && row < end;) {
            int64_t m = std::min(tiling_.rows_per_tile, end - row);
            if (tiling_.planes) m = std::min(m, inner() - row % inner());  // within one outer index
            if (forward_)
                ok = forward_tile(ub, row, m, tiles);
            else if (tiling_.planes)
                ok = backward_planes(ub, row, m, tiles);
            else
                ok = backward_rows(ub, row, m, tiles);
            row += m;
        }
        records_.record(ub, {core, kernel_name(call_.desc().op), begin_us, host_microseconds(), tiles});
    }

private:
    int64_t inner() const { return call_.desc().dims[2]; }
    const char* global(int slot, int64_t row, int64_t cls = 0) const {
        return sdk::element_address(call_.operand(slot),
                                    call_.row_start(slot, row) + cls * call_.class_stride(slot));
    }
    char* global_out(int slot, int64_t row, int64_t cls = 0) const {
        return sdk::element_address_mutable(call_.operand(slot),
                                            call_.row_start(slot, row) + cls * call_.class_stride(slot));
    }
    int64_t target(UnifiedBuffer& ub, int64_t r) const {
        return target_in(ub.at<char>(layout_.targets), call_.operand(slots_.target).dtype, r);
    }
    // Targets of rows [first, first + m), and the backward's unreduced gradOutput.
    bool load_rows(UnifiedBuffer& ub, int64_t first, int64_t m) const {
        bool ok = ub.copy_in(layout_.targets, global(slots_.target, first), m * sizes_.target);
        const int grad = NNPLUG_NLL_LOSS_BACKWARD_GRAD_OUTPUT;
        if (ok && !forward_ && sizes_.value > 0)
            ok = ub.copy_in(layout_.values, global(grad, first), m * sizes_.value);
        return ok;
    }
    // weight[t] gathered as one DMA block (1 without weights); the dense copy stands for the
    // weight operand, staged in the workspace as CANN's tiling would.
    float gather_weight(UnifiedBuffer& ub, int64_t t, bool& ok) const {
        if (op_.dense_weights() == nullptr) return 1.0f;
        ok = ok && ub.copy_in(layout_.weight, op_.dense_weights() + t, 4);
        return ok ? *ub.at<float>(layout_.weight) : 0.0f;
    }
    // The gradient of row r of the tile: gradOutput's element, or the reduced scale.
    float gradient(UnifiedBuffer& ub, int64_t r) const {
        if (sizes_.value == 0) return grad_scale_;
        const int grad = NNPLUG_NLL_LOSS_BACKWARD_GRAD_OUTPUT;
        return load_as_f32(ub.at<char>(layout_.values), call_.operand(grad).dtype, r);
    }
    bool forward_tile(UnifiedBuffer& ub, int64_t first, int64_t m, int64_t& tiles);
    bool backward_rows(UnifiedBuffer& ub, int64_t first, int64_t m, int64_t& tiles);
    bool backward_planes(UnifiedBuffer& ub, int64_t first, int64_t m, int64_t& tiles);

    const NllTiling& tiling_;
    const KernelOptions& options_;
    common::ClassOp op_;
    const common::ClassCall& call_;
    common::ClassSlots slots_;
    NllSizes sizes_;
    NllLayout layout_;
    bool forward_;
    std::vector<double> losses_, weights_;  // per row (the forward)
    float grad_scale_ = 1;
    CoreRecords records_;
};

// Rows [first, first + m): each counted row's self[row, target] gathered, its loss -w * x as
// the row model computes it, an unreduced loss written back with the tile.
bool NllLaunch::forward_tile(UnifiedBuffer& ub, int64_t first, int64_t m, int64_t& tiles) {
    bool ok = load_rows(ub, first, m);
    const int32_t self_dtype = call_.operand(slots_.self).dtype;
    const int32_t out_dtype = call_.operand(slots_.out).dtype;
    const int64_t self_size = size_of(call_.operand(slots_.self));
    for (int64_t r = 0; ok && r < m; ++r) {
        const int64_t row = first + r, t = target(ub, r);
        float l = 0.0f, w = 0.0f;
        if (!call_.ignored(t)) {
            ok = ub.copy_in(layout_.gather, global(slots_.self, row, t), self_size);
            w = gather_weight(ub, t, ok);
            if (!ok) break;
            l = -(w * load_as_f32(ub.at<char>(layout_.gather), self_dtype, 0));
        }
        if (sizes_.value > 0) store_from_f32(ub.at<char>(layout_.values), out_dtype, r, l);
        losses_[static_cast<size_t>(row)] = l;
        weights_[static_cast<size_t>(row)] = w;
    }
    if (ok && sizes_.value > 0)
        ok = ub.copy_out(global_out(slots_.out, first), layout_.values, m * sizes_.value);
    ++tiles;
    return ok;
}

// Rows [first, first + m) of an (N, C) output: whole rows per tile (m > 1), or one row in
// tiles along the classes; zeros, and -w[t] * g at the target's class.
bool NllLaunch::backward_rows(UnifiedBuffer& ub, int64_t first, int64_t m, int64_t& tiles) {
    bool ok = load_rows(ub, first, m);
    const int32_t dtype = call_.operand(slots_.out).dtype;
    const int64_t span = tiling_.tiles_per_row > 1 ? tiling_.tile_elements : call_.classes();
    for (int64_t k = 0; ok && k < tiling_.tiles_per_row; ++k) {
        const int64_t begin = k * span, n = std::min(span, call_.classes() - begin);
        char* out = ub.at<char>(layout_.out);
        std::memset(out, 0, static_cast<size_t>(m * n * sizes_.out));  // 0.0 is all-zero bits
        for (int64_t r = 0; ok && r < m; ++r) {
            const int64_t t = target(ub, r);
            if (call_.ignored(t) || t < begin || t >= begin + n) continue;
            const float w = gather_weight(ub, t, ok);
            store_from_f32(out, dtype, r * n + t - begin, -(w * gradient(ub, r)));
        }
        ok = ok && ub.copy_out(global_out(slots_.out, first, begin), layout_.out, m * n * sizes_.out);
        ++tiles;
    }
    return ok;
}

// Positions [first, first + m) of one outer index of an (N, C, d...) output: for each class,
// the run of its m positions, contiguous in the output, as one tile.
bool NllLaunch::backward_planes(UnifiedBuffer& ub, int64_t first, int64_t m, int64_t& tiles) {
    bool ok = load_rows(ub, first, m);
    const int32_t dtype = call_.operand(slots_.out).dtype;
    for (int64_t c = 0; ok && c < call_.classes(); ++c) {
        char* out = ub.at<char>(layout_.out);
        std::memset(out, 0, static_cast<size_t>(m * sizes_.out));
        bool gathered = false;
        float w = 0.0f;
        for (int64_t r = 0; ok && r < m; ++r) {
            const int64_t t = target(ub, r);
            if (t != c || call_.ignored(t)) continue;
            if (!gathered) w = gather_weight(ub, c, ok);
            gathered = true;
            store_from_f32(out, dtype, r, -(w * gradient(ub, r)));
        }
        ok = ok && ub.copy_out(global_out(slots_.out, first, c), layout_.out, m * sizes_.out);
        ++tiles;
    }
    return ok;
}

}  // namespace
}  // namespace nnplug::emu

namespace nnplug::emu {

bool runs_in_nll_kernel(const nnplug_op_desc& desc) {
    if (!is_nll_op(desc.op) || desc.ndim != 3 || nnplug_desc_class_axis(&desc) != 1) return false;
    const common::ClassCall call(desc);
    if (!call.valid()) return false;
    const common::ClassSlots slots = common::class_slots(desc.op);
    const bool reduces = call.reduction() != NNPLUG_REDUCTION_NONE;
    if (!dense_rows(desc, slots.target)) return false;
    if (is_forward(desc.op)) return reduces || dense_rows(desc, slots.out);  // self is gathered: any strides
    const int64_t inner = desc.dims[2];
    return laid_out(desc, call.operand(slots.out), {desc.dims[1] * inner, inner, 1}) &&
           (reduces || dense_rows(desc, NNPLUG_NLL_LOSS_BACKWARD_GRAD_OUTPUT));
}

NllTiling plan_nll(const nnplug_op_desc& desc, const DeviceLimits& limits) {
    const common::ClassCall call(desc);
    const NllSizes sizes(call);
    const int64_t rows = call.rows(), classes = call.classes(), inner = desc.dims[2];
    NllTiling tiling;
    tiling.block_dim = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(limits.vector_cores, rows)));
    tiling.rows_per_core = (rows + tiling.block_dim - 1) / tiling.block_dim;
    // The UB less the two gathered blocks and room for aligning five regions.
    const int64_t budget =
        std::max<int64_t>(0, limits.ub_bytes - 2 * UnifiedBuffer::kCopyUnit - int64_t{5} * 31);
    const int64_t per_row = sizes.target + sizes.value;
    const int64_t chosen = limits.tile_elements;  // the tile_elements option, else 0
    if (is_forward(desc.op)) {
        tiling.rows_per_tile =
            std::clamp<int64_t>(chosen > 0 ? chosen : budget / per_row, 1, tiling.rows_per_core);
        tiling.tile_elements = tiling.rows_per_tile;
    } else if (inner > 1) {  // each tile a run of positions, one per class
        tiling.planes = true;
        const int64_t most = std::min(inner, tiling.rows_per_core);
        tiling.rows_per_tile =
            std::clamp<int64_t>(chosen > 0 ? chosen : budget / (per_row + sizes.out), 1, most);
        tiling.tile_elements = tiling.rows_per_tile;
        tiling.tiles_per_row = classes;
    } else {
        const int64_t whole = chosen > 0 ? chosen / classes : budget / (per_row + classes * sizes.out);
        if (whole >= 1) {  // whole rows per tile
            tiling.rows_per_tile = std::min(whole, tiling.rows_per_core);
            tiling.tile_elements = tiling.rows_per_tile * classes;
        } else {  // a row along the classes, in tiles of whole 32-byte blocks
            const int64_t block = UnifiedBuffer::kCopyUnit / sizes.out;
            tiling.rows_per_tile = 1;
            tiling.tile_elements =
                chosen > 0 ? chosen : std::max(block, (budget - per_row) / sizes.out / block * block);
            tiling.tiles_per_row = (classes + tiling.tile_elements - 1) / tiling.tile_elements;
        }
    }
    tiling.ub_bytes = NllLayout(tiling, sizes).bytes;
    return tiling;
}

std::string run_nll_kernel(const nnplug_op_desc& desc, const NllTiling& tiling, const KernelOptions& options,
                           CorePool& cores, LaunchStats& stats) {
    NllLaunch launch(desc, tiling, options);
    const common::ClassOp& op = launch.op();
    std::string refusal = common::check_targets(op.call(), common::class_slots(desc.op).target, serial);
    if (!refusal.empty()) return refusal;
    if (!launch.forward()) launch.set_grad_scale(common::class_grad_scale(op, serial));
    cores.run(tiling.block_dim, [&](int core) { launch.run_core(core); });
    launch.records().add_stats(stats);
    if (std::string fault = launch.records().first_fault(); !fault.empty()) return fault;
    if (launch.forward()) launch.finish_forward();
    return {};
}

}  // namespace nnplug::emu
