// The cross-entropy ops in the device's execution model: rows split over the vector cores,
// each row moved through the core's Unified Buffer in tiles of whole log-sum-exp blocks. A
// row the UB holds is one tile; a longer one (a vocabulary of 129,280 classes) is tiled
// along the class axis, with the log-sum-exp carried online from tile to tile, then tiled
// again to write logProb. The per-row sums are added in the row model's fixed chunks, so the
// results are cpu_tbb's bit for bit. The other ops with a class axis, and cross-entropy rows
// that are not contiguous, run in the shared row model (common/class_ops.h).
#pragma once

#include <nnplug/plugin.h>

#include <cstdint>
#include <string>

#include "core_pool.h"
#include "elementwise_kernel.h"
#include "elementwise_tiling.h"

namespace nnplug::emu {

struct ClassTiling {
    int block_dim = 1;          // cores the kernel runs on
    int64_t rows_per_core = 0;  // the last core may get fewer
    int64_t tile_elements = 0;  // classes per tile, a whole number of log-sum-exp blocks
    int64_t tiles_per_row = 0;
    int64_t ub_bytes = 0;  // input tile, output tile, float32 weights tile
};

// Whether desc is a cross-entropy call this kernel runs (contiguous rows of one dtype).
bool runs_in_class_kernel(const nnplug_op_desc& desc);

ClassTiling plan_class(const nnplug_op_desc& desc, const DeviceLimits& limits);

// Empty on success, else the fault or the refusal of a target (one line, without the op's name).
std::string run_class_kernel(const nnplug_op_desc& desc, const ClassTiling& tiling,
                             const KernelOptions& options, CorePool& cores, LaunchStats& stats);

}  // namespace nnplug::emu
