// The Ascend SoCs the emulator models: the numbers a kernel's tiling and the
// statistics depend on. Each can be overridden from the config.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nnplug::emu {

struct SocProfile {
    std::string name;           // as aclrtGetSocName reports it, e.g. "Ascend910B"
    int vector_cores = 0;       // cores an elementwise (vector) kernel can use
    int64_t ub_bytes = 0;       // Unified Buffer per core
    int64_t memory_bytes = 0;   // device memory (HBM / LPDDR) capacity
    double bandwidth_gbps = 0;  // device memory bandwidth, GB/s (10^9 bytes)
    bool bfloat16 = false;      // whether the vector unit computes bfloat16
    // Whether CANN ships the CrossEntropyLoss kernels for it (ascend910b, ascend910_93 and
    // ascend950 in ops-nn's op definitions), and whether they take int32 targets (only
    // ascend950's; the others register int64 targets alone).
    bool cross_entropy = false;
    bool cross_entropy_int32_targets = false;
};

// The built-in profile of a SoC name, or nothing for an unknown name.
std::optional<SocProfile> soc_profile(const std::string& name);

// Every name soc_profile() knows, for error messages.
std::vector<std::string> soc_names();

}  // namespace nnplug::emu
