// Runs one planned elementwise launch in the device's execution model, for any op:
// a Contiguous kernel for broadcast or strided inputs, the op's vector kernel on
// block_dim cores moving tiles through each core's Unified Buffer, a ViewCopy of a
// strided output, and the final sum of a reduction.
#pragma once

#include <nnplug/plugin.h>

#include <string>
#include <vector>

#include "core_pool.h"
#include "elementwise_op.h"
#include "elementwise_tiling.h"

namespace nnplug::emu {

struct KernelOptions {
    const char* soc_name = "";
    int64_t ub_bytes = 0;
    bool check_inputs = false;  // run the op's check_inputs rule on every tile
};

// One core's share of one kernel, in host microseconds, for the trace.
struct CoreSpan {
    int core;
    const char* kernel;
    double begin_us;
    double end_us;
    int64_t tiles;
};

struct LaunchStats {
    int64_t bytes_moved = 0;  // global memory <-> UB, plus the contiguous copies
    std::vector<CoreSpan> spans;
};

// Empty on success, else the fault (one line, without the op's name).
std::string run_elementwise(const nnplug_op_desc& desc, const ElementwiseOp& op,
                            const ElementwiseTiling& tiling, void* workspace, const KernelOptions& options,
                            CorePool& cores, LaunchStats& stats);

}  // namespace nnplug::emu
