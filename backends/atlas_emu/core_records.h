// What each core of a class-axis kernel leaves behind (its fault, its span in the trace and
// the bytes it moved), gathered into the launch's statistics once every core is done.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "elementwise_kernel.h"
#include "unified_buffer.h"

namespace nnplug::emu {

class CoreRecords {
public:
    explicit CoreRecords(int cores)
        : faults_(static_cast<size_t>(cores)), spans_(static_cast<size_t>(cores)) {}

    // Called once by each core, from its own thread.
    void record(const UnifiedBuffer& ub, const CoreSpan& span) {
        faults_[static_cast<size_t>(span.core)] = ub.fault_message();
        spans_[static_cast<size_t>(span.core)] = span;
        bytes_moved_ += ub.bytes_moved();
    }
    // The lowest core's fault, naming the core, or empty.
    std::string first_fault() const {
        for (size_t core = 0; core < faults_.size(); ++core)
            if (!faults_[core].empty()) return faults_[core] + " (core " + std::to_string(core) + ")";
        return {};
    }
    void add_stats(LaunchStats& stats) const {
        stats.bytes_moved += bytes_moved_;
        stats.spans.insert(stats.spans.end(), spans_.begin(), spans_.end());
    }

private:
    std::vector<std::string> faults_;
    std::vector<CoreSpan> spans_;
    std::atomic<int64_t> bytes_moved_{0};
};

// The host's share of a launch (checking targets, summing weights), in the order a device
// runs it.
inline void serial(int64_t count, const std::function<void(int64_t, int64_t)>& body) {
    body(0, count);
}

}  // namespace nnplug::emu
