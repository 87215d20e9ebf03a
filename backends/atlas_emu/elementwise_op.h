// What the elementwise execution model needs from one op: its names and the tile
// compute. Tiling, staging, the UB tile loop and the reduction are op-agnostic
// (elementwise_tiling, elementwise_kernel); each op kind registers one of these.
#pragma once

#include <nnplug/plugin.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace nnplug::emu {

// Per operand slot, the current tile widened to float32 in the Unified Buffer;
// null for absent operands and for the output.
using TileInputs = std::array<const float*, NNPLUG_MAX_OPERANDS>;

struct ElementwiseOp {
    int32_t kind = -1;             // nnplug_op_kind (its aclnn name: nnplug_op_api_name)
    const char* kernel_name = "";  // the vector kernel, for the trace's core tracks
    // result[0..n) for the tile's inputs; a reducing op's per-element values, which the
    // kernel then sums.
    void (*compute)(const nnplug_op_desc& desc, const TileInputs& in, int64_t n, float* result) = nullptr;
    // (optional) The check_inputs option's rule: empty when the tile's inputs are in the
    // op's domain, else one line naming the first offending element (first_element is the
    // tile's position in the iteration space).
    std::string (*check_inputs)(const TileInputs& in, int64_t n, int64_t first_element) = nullptr;
    // Input slots (bit per slot) outside the op's type promotion: their tiles are rounded to
    // NNPLUG_ATTR_PROMOTED_DTYPE in the Unified Buffer after widening, as a cast to it would.
    uint32_t rounded_to_promoted = 0;
};

// Each <op>_compute.cpp appends its ops; the build lists the files (nnplug_op_sources).
#define NNPLUG_OP_SOURCE(stem) void register_##stem(std::vector<ElementwiseOp>& ops);
#include "atlas_emu_op_sources.inc"
#undef NNPLUG_OP_SOURCE

}  // namespace nnplug::emu
