// Runs one planned binary cross-entropy launch in the device's execution model:
// a contiguous-copy kernel for broadcast or strided operands, the vector kernel on
// block_dim cores moving tiles through each core's Unified Buffer, the copy back
// of a strided out, and the final sum of a reduction.
#pragma once

#include <nnplug/plugin.h>

#include <string>
#include <vector>

#include "bce_tiling.h"
#include "core_pool.h"

namespace nnplug::emu {

struct KernelOptions {
    const char* soc_name = "";
    int64_t ub_bytes = 0;
    bool check_inputs = false;  // report self outside [0, 1] as a kernel error
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
std::string run_bce(const nnplug_op_desc& desc, const BceTiling& tiling, void* workspace,
                    const KernelOptions& options, CorePool& cores, LaunchStats& stats);

// Microseconds on the host clock the trace uses.
double host_microseconds();

}  // namespace nnplug::emu
