#include "bce_tiling.h"

#include <algorithm>

namespace nnplug::emu {
namespace {

// Cores start on whole 64-element blocks: 256 bytes of float32, 128 of 16-bit types,
// so each core's global memory and every full tile stay 32-byte aligned.
constexpr int64_t kElementBlock = 64;
constexpr uint64_t kWorkspaceAlignment = 512;

int64_t round_up(int64_t value, int64_t unit) { return (value + unit - 1) / unit * unit; }

int64_t size_of(int32_t dtype) { return static_cast<int64_t>(nnplug_dtype_size(dtype)); }

// Row-major contiguous over the iteration space (size-1 dims do not matter).
bool contiguous(const nnplug_op_desc& desc, const nnplug_tensor& t) {
    int64_t expected = 1;
    for (int k = desc.ndim - 1; k >= 0; --k) {
        if (desc.dims[k] != 1 && t.strides[k] != expected) return false;
        expected *= desc.dims[k];
    }
    return true;
}

}  // namespace

const nnplug_tensor& operand(const nnplug_op_desc& desc, int which) {
    switch (which) {
    case kGrad: return desc.grad_output;
    case kSelf: return desc.self;
    case kTarget: return desc.target;
    case kWeight: return desc.weight;
    default: return desc.out;
    }
}

const char* op_api_name(const nnplug_op_desc& desc) {
    return desc.op == NNPLUG_OP_BCE_BACKWARD ? "aclnnBinaryCrossEntropyBackward" : "aclnnBinaryCrossEntropy";
}

BceTiling plan_bce(const nnplug_op_desc& desc, const DeviceLimits& limits) {
    BceTiling tiling;
    const bool backward = desc.op == NNPLUG_OP_BCE_BACKWARD;
    tiling.used[kGrad] = backward;
    tiling.used[kSelf] = tiling.used[kTarget] = true;
    tiling.used[kWeight] = desc.weight.present != 0;
    tiling.used[kOut] = backward || desc.reduction == NNPLUG_REDUCTION_NONE;

    // Workspace: staged operands first, then the partials of a reduction.
    uint64_t workspace = 0;
    for (int o = 0; o < kOperands; ++o) {
        if (!tiling.used[o] || contiguous(desc, operand(desc, o))) continue;
        tiling.staged[o] = true;
        tiling.staged_offset[o] = workspace;
        workspace += static_cast<uint64_t>(round_up(desc.numel * size_of(operand(desc, o).dtype), kWorkspaceAlignment));
    }

    const int64_t blocks = (desc.numel + kElementBlock - 1) / kElementBlock;
    const int64_t cores = std::max<int64_t>(1, std::min<int64_t>(limits.vector_cores, blocks));
    tiling.elements_per_core = (blocks + cores - 1) / cores * kElementBlock;
    tiling.block_dim = static_cast<int>((desc.numel + tiling.elements_per_core - 1) / tiling.elements_per_core);

    if (tiling.reduces()) {
        tiling.partials_offset = workspace;
        workspace += round_up(static_cast<int64_t>(tiling.block_dim * sizeof(double)), kWorkspaceAlignment);
    }
    tiling.workspace_bytes = workspace;

    // UB bytes per tile element: two slots per input, a float32 cast buffer per 16-bit input,
    // two out slots, and a float32 result buffer where the result is not float32 in a slot.
    int64_t per_element = 0;
    for (int o = 0; o < kOut; ++o) {
        if (!tiling.used[o]) continue;
        const int64_t size = size_of(operand(desc, o).dtype);
        per_element += 2 * size + (size == 2 ? 4 : 0);
    }
    if (tiling.used[kOut]) {
        const int64_t size = size_of(desc.out.dtype);
        per_element += 2 * size + (size == 2 ? 4 : 0);
    } else {
        per_element += 4;
    }
    if (limits.tile_elements > 0) {
        tiling.tile_elements = limits.tile_elements;
    } else {
        const int64_t fits = limits.ub_bytes / per_element / kElementBlock * kElementBlock;
        tiling.tile_elements = std::max(kElementBlock, std::min(fits, tiling.elements_per_core));
    }
    tiling.tiles_per_core = (tiling.elements_per_core + tiling.tile_elements - 1) / tiling.tile_elements;

    int64_t top = 0;
    const auto place = [&](int64_t bytes) {
        const int64_t at = top;
        top += bytes;
        return at;
    };
    const int64_t tile = tiling.tile_elements;
    tiling.cast_offset.fill(-1);
    for (int o = 0; o < kOperands; ++o) {
        if (!tiling.used[o]) continue;
        const int64_t size = size_of(operand(desc, o).dtype);
        tiling.slot_offset[o][0] = place(tile * size);
        tiling.slot_offset[o][1] = place(tile * size);
        if (size == 2 && o != kOut) tiling.cast_offset[o] = place(tile * 4);
    }
    if (tiling.reduces() || size_of(desc.out.dtype) == 2) tiling.result_offset = place(tile * 4);
    tiling.ub_bytes = top;
    return tiling;
}

}  // namespace nnplug::emu
