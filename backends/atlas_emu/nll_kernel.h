// The NLLLoss ops (NLLLoss, NLLLoss2d and their backwards) in the device's execution model:
// rows split over the vector cores, each core's targets moved through its Unified Buffer in
// tiles. The forward gathers each counted row's self[row, target] (and weight[target]) as one
// 32-byte DMA block, writes an unreduced loss back a tile at a time and keeps each row's loss
// and weight, summed afterwards in the row model's fixed chunks. The backward writes the
// output through the UB: an (N, C) row in whole-row tiles, or along the classes when a row
// exceeds the UB; an (N, C, d...) output in tiles of one class's run of positions. The results
// are cpu_tbb's bit for bit. Calls whose targets, losses, gradients or output are not laid
// out densely run in the shared row model (common/class_ops.h).
#pragma once

#include <nnplug/plugin.h>

#include <cstdint>
#include <string>

#include "core_pool.h"
#include "elementwise_kernel.h"
#include "elementwise_tiling.h"

namespace nnplug::emu {

struct NllTiling {
    int block_dim = 1;          // cores the kernel runs on
    int64_t rows_per_core = 0;  // the last core may get fewer
    int64_t rows_per_tile = 0;  // targets (and losses or gradOutput) per UB tile
    int64_t tile_elements = 0;  // output elements per tile (the forward: rows_per_tile)
    int64_t tiles_per_row = 1;  // the backward's output tiles per tile of rows
    bool planes = false;        // a backward with positions after the class axis (NLLLoss2d)
    int64_t ub_bytes = 0;
};

// Whether desc is an NLLLoss call this kernel runs ([outer, C, inner], rows laid out densely).
bool runs_in_nll_kernel(const nnplug_op_desc& desc);

NllTiling plan_nll(const nnplug_op_desc& desc, const DeviceLimits& limits);

// Empty on success, else the fault or the refusal of a target (one line, without the op's name).
std::string run_nll_kernel(const nnplug_op_desc& desc, const NllTiling& tiling, const KernelOptions& options,
                           CorePool& cores, LaunchStats& stats);

}  // namespace nnplug::emu
