// The kernel tests' loop over instruction sets: each Highway target this CPU supports, with
// run-time dispatch forced to it.
#pragma once

#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <cstdint>
#include <type_traits>

namespace nnplug::test {

// Runs body once per target (body(name) where it takes the target's name), then restores
// the dispatch to the best target.
template <typename Body>
void for_each_target(Body&& body) {
    for (const int64_t target : hwy::SupportedAndGeneratedTargets()) {
        hwy::SetSupportedTargetsForTest(target);
        SCOPED_TRACE(hwy::TargetName(target));
        if constexpr (std::is_invocable_v<Body, const char*>)
            body(hwy::TargetName(target));
        else
            body();
    }
    hwy::SetSupportedTargetsForTest(0);
}

}  // namespace nnplug::test
