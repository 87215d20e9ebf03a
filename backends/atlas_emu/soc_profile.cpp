#include "soc_profile.h"

namespace nnplug::emu {
namespace {

constexpr int64_t kKiB = 1024;
constexpr int64_t kGiB = kKiB * 1024 * 1024;

// Defaults from public material:
//  - core counts and UB sizes: the SoC descriptions CANN ships for its tiling
//    (platform_config/<SoC>.ini: ai_core_cnt / vector_core_cnt, ub_size);
//  - memory and bandwidth: Huawei's product data sheets (Ascend 910: Hot Chips 31,
//    2019, "32 GB HBM2, 1.2 TB/s"; Atlas 800T A2 / Ascend 910B: 64 GB HBM2e,
//    1.6 TB/s; Atlas 300I Pro / Ascend 310P: 24 GB LPDDR4X, 204.8 GB/s).
const std::vector<SocProfile>& profiles() {
    static const std::vector<SocProfile> all = {
        // Atlas training family (Ascend 910, DaVinci cores with cube and vector units).
        {"Ascend910", 32, 256 * kKiB, 32 * kGiB, 1200.0, false, false, false},
        // Atlas A2 (Ascend 910B2): 24 cube cores and 48 separate vector cores.
        {"Ascend910B", 48, 192 * kKiB, 64 * kGiB, 1600.0, true, true, false},
        // Atlas inference family (Ascend 310P3): 8 AI cores.
        {"Ascend310P", 8, 256 * kKiB, 24 * kGiB, 204.8, false, false, false},
    };
    return all;
}

}  // namespace

std::optional<SocProfile> soc_profile(const std::string& name) {
    for (const auto& profile : profiles())
        if (profile.name == name) return profile;
    return std::nullopt;
}

std::vector<std::string> soc_names() {
    std::vector<std::string> names;
    for (const auto& profile : profiles()) names.push_back(profile.name);
    return names;
}

}  // namespace nnplug::emu
