#include "elementwise_tiling.h"

#include <nnplug/plugin_support.h>

#include <algorithm>

namespace nnplug::emu {
namespace {

// Cores start on whole 64-element blocks: 256 bytes of float32, 128 of 16-bit types,
// so each core's global memory and every full tile stay 32-byte aligned.
constexpr int64_t kElementBlock = 64;
constexpr uint64_t kWorkspaceAlignment = 512;

int64_t round_up(int64_t value, int64_t unit) {
    return (value + unit - 1) / unit * unit;
}

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

const char* elementwise_refusal(const nnplug_op_desc& desc) {
    // A descriptor is read as "at least this big": version 2's first layout ends where the
    // appended members begin, and an elementwise launch reads nothing after it.
    if (desc.struct_size < offsetof(nnplug_op_desc, class_axis))
        return "the op descriptor is older than ABI version 2";
    if (desc.operand_count < 1 || desc.operand_count > NNPLUG_MAX_OPERANDS || desc.ndim < 0 ||
        desc.ndim > NNPLUG_MAX_DIMS || desc.numel < 1)
        return "the op descriptor's operand count, rank or element count is out of range";
    int outputs = 0;
    for (int o = 0; o < desc.operand_count; ++o) {
        const nnplug_tensor& t = desc.operands[o];
        if (!sdk::present(t)) continue;
        if (!nnplug_dtype_is_floating(t.dtype))
            return "an operand of an elementwise op has a dtype other than float32, float16 or bfloat16";
        outputs += sdk::is_output(t) ? 1 : 0;
    }
    if (outputs != 1) return "atlas_emu's elementwise kernels write exactly one present output operand";
    return nullptr;
}

ElementwiseTiling plan_elementwise(const nnplug_op_desc& desc, const DeviceLimits& limits) {
    ElementwiseTiling tiling;
    for (int o = 0; o < desc.operand_count; ++o) {
        const nnplug_tensor& t = desc.operands[o];
        if (!sdk::present(t)) continue;
        if (sdk::is_output(t)) {
            tiling.output = o;
            tiling.reduces = sdk::reduced(t);
        }
        tiling.used[o] = !(sdk::is_output(t) && sdk::reduced(t));
    }

    // Workspace: staged operands first, then the partials of a reduction.
    uint64_t workspace = 0;
    for (int o = 0; o < desc.operand_count; ++o) {
        const nnplug_tensor& t = desc.operands[o];
        if (!tiling.used[o] || contiguous(desc, t)) continue;
        tiling.staged[o] = true;
        tiling.staged_offset[o] = workspace;
        workspace += static_cast<uint64_t>(round_up(desc.numel * size_of(t.dtype), kWorkspaceAlignment));
    }

    const int64_t blocks = (desc.numel + kElementBlock - 1) / kElementBlock;
    const int64_t cores = std::max<int64_t>(1, std::min<int64_t>(limits.vector_cores, blocks));
    tiling.elements_per_core = (blocks + cores - 1) / cores * kElementBlock;
    tiling.block_dim =
        static_cast<int>((desc.numel + tiling.elements_per_core - 1) / tiling.elements_per_core);

    if (tiling.reduces) {
        tiling.partials_offset = workspace;
        workspace += round_up(static_cast<int64_t>(tiling.block_dim * sizeof(double)), kWorkspaceAlignment);
    }
    tiling.workspace_bytes = workspace;

    // UB bytes per tile element: two slots per moved operand, a float32 cast buffer per
    // 16-bit input, and a float32 result buffer where the result is not float32 in a slot.
    const bool result_buffer = tiling.reduces || size_of(desc.operands[tiling.output].dtype) == 2;
    int64_t per_element = result_buffer ? 4 : 0;
    for (int o = 0; o < desc.operand_count; ++o) {
        if (!tiling.used[o]) continue;
        const int64_t size = size_of(desc.operands[o].dtype);
        per_element += 2 * size + (size == 2 && o != tiling.output ? 4 : 0);
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
    for (int o = 0; o < desc.operand_count; ++o) {
        if (!tiling.used[o]) continue;
        const int64_t size = size_of(desc.operands[o].dtype);
        tiling.slot_offset[o][0] = place(tile * size);
        tiling.slot_offset[o][1] = place(tile * size);
        if (size == 2 && o != tiling.output) tiling.cast_offset[o] = place(tile * 4);
    }
    if (result_buffer) tiling.result_offset = place(tile * 4);
    tiling.ub_bytes = top;
    return tiling;
}

}  // namespace nnplug::emu
