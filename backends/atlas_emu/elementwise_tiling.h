// How an elementwise launch is cut up for the device, decided on the host once per
// executor as a CANN op's tiling function does: which operands are first made
// contiguous (and where in the workspace), how many cores run, how large a tile is
// and how the Unified Buffer is laid out. Driven by the descriptor's operand list
// alone: every array is indexed by operand slot, whatever the op.
#pragma once

#include <nnplug/plugin.h>

#include <array>
#include <cstdint>

namespace nnplug::emu {

inline int64_t size_of(int32_t dtype) {
    return static_cast<int64_t>(nnplug_dtype_size(dtype));
}

struct DeviceLimits {
    int vector_cores = 1;
    int64_t ub_bytes = 0;
    int64_t tile_elements = 0;  // 0: derive from the UB; else forced (for kernel debugging)
};

struct ElementwiseTiling {
    template <typename T>
    using PerSlot = std::array<T, NNPLUG_MAX_OPERANDS>;

    int output = -1;       // the slot the op writes
    bool reduces = false;  // the output is one reduced element: cores keep double partials instead
    // Operands the tile loop moves: the present inputs, and the output unless it is reduced.
    PerSlot<bool> used{};
    // Broadcast or strided operands are staged contiguously in the workspace.
    PerSlot<bool> staged{};
    PerSlot<uint64_t> staged_offset{};
    uint64_t partials_offset = 0;  // the per-core double partials of a reduction
    uint64_t workspace_bytes = 0;

    int block_dim = 1;              // cores the kernel runs on
    int64_t elements_per_core = 0;  // the last core may get fewer
    int64_t tile_elements = 0;
    int64_t tiles_per_core = 0;  // of the fullest core

    // Unified Buffer layout, in slot order: two slots (double buffering) per moved operand,
    // a float32 cast buffer per 16-bit input, and a float32 result buffer when the output
    // is 16-bit or reduced.
    PerSlot<std::array<int64_t, 2>> slot_offset{};
    PerSlot<int64_t> cast_offset{};  // -1: computes straight from the slot
    int64_t result_offset = -1;      // -1: computes straight into the output's slot
    int64_t ub_bytes = 0;

    bool is_input(int slot) const { return used[slot] && slot != output; }
};

// Why the elementwise model cannot run desc (one line), or null when it can.
const char* elementwise_refusal(const nnplug_op_desc& desc);

// The tiling of a descriptor elementwise_refusal accepts.
ElementwiseTiling plan_elementwise(const nnplug_op_desc& desc, const DeviceLimits& limits);

}  // namespace nnplug::emu
