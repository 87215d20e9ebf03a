// How a binary cross-entropy launch is cut up for the device, decided on the host
// as a CANN op's tiling function does: which operands are first made contiguous
// (and where in the workspace), how many cores run, how large a tile is and how
// the Unified Buffer is laid out.
#pragma once

#include <nnplug/plugin.h>

#include <array>
#include <cstdint>

namespace nnplug::emu {

constexpr int kOperands = 5;  // grad_output, self, target, weight, out
enum Operand { kGrad = 0, kSelf = 1, kTarget = 2, kWeight = 3, kOut = 4 };

const nnplug_tensor& operand(const nnplug_op_desc& desc, int which);
// The aclnn entry point of a descriptor's op, for messages.
const char* op_api_name(const nnplug_op_desc& desc);

struct DeviceLimits {
    int vector_cores = 1;
    int64_t ub_bytes = 0;
    int64_t tile_elements = 0;  // 0: derive from the UB; else forced (for kernel debugging)
};

struct BceTiling {
    // Operands the kernel reads or writes (out is absent for a reduced forward).
    std::array<bool, kOperands> used{};
    // Broadcast or strided operands are staged contiguously in the workspace.
    std::array<bool, kOperands> staged{};
    std::array<uint64_t, kOperands> staged_offset{};
    uint64_t partials_offset = 0;  // a reduced forward's per-core double partials
    uint64_t workspace_bytes = 0;

    int block_dim = 1;                // cores the kernel runs on
    int64_t elements_per_core = 0;    // the last core may get fewer
    int64_t tile_elements = 0;
    int64_t tiles_per_core = 0;       // of the fullest core

    // Unified Buffer layout: two slots (double buffering) per input and for out,
    // float32 cast buffers for 16-bit inputs, a float32 result buffer when out is
    // 16-bit or the loss is reduced.
    std::array<std::array<int64_t, 2>, kOperands> slot_offset{};
    std::array<int64_t, kOperands> cast_offset{};  // -1: computes straight from the slot
    int64_t result_offset = -1;                    // -1: computes straight into the out slot
    int64_t ub_bytes = 0;

    bool reduces() const { return !used[kOut]; }
};

BceTiling plan_bce(const nnplug_op_desc& desc, const DeviceLimits& limits);

}  // namespace nnplug::emu
