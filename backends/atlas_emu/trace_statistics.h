// The args of a kernel's event in the Chrome trace: its tiling and traffic as a JSON object.
// Apart from the plugin so that the trace writer's fuzz target builds them from any numbers.
#pragma once

#include <cstdint>
#include <string>

#include "class_kernel.h"
#include "elementwise_tiling.h"
#include "nll_kernel.h"

namespace nnplug::emu {

// An elementwise kernel's launch; device_us is the estimated device time (json_number).
std::string statistics_json(const ElementwiseTiling& tiling, int64_t bytes_moved, double device_us);

// A class-axis kernel's launch.
std::string class_statistics_json(const ClassTiling& tiling, int64_t bytes_moved);

// An NLLLoss kernel's launch.
std::string nll_statistics_json(const NllTiling& tiling, int64_t bytes_moved);

}  // namespace nnplug::emu
