// What the side-by-side drivers share: a call timed over repeated runs, and the STREAM triad
// on the same threads, so that a ratio against it is measured in one process.
#pragma once

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>
#include <oneapi/tbb/task_arena.h>

#include <chrono>
#include <cstdint>
#include <vector>

#include "stream_triad.h"

namespace nnplug::bench {

// Seconds per call of fn, calling it until min_seconds have passed.
template <typename Fn>
double seconds_per_call(Fn&& fn, double min_seconds) {
    using Clock = std::chrono::steady_clock;
    int64_t calls = 0;
    const auto start = Clock::now();
    double elapsed = 0;
    do {
        fn();
        ++calls;
        elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    } while (elapsed < min_seconds);
    return elapsed / static_cast<double>(calls);
}

// The triad over n float32 elements on `threads` threads of its own arena.
class ParallelTriad {
public:
    ParallelTriad(int threads, int64_t n)
        : arena_(threads),
          threads_(threads),
          a_(static_cast<size_t>(n)),
          b_(a_.size(), 1),
          c_(a_.size(), 2) {}
    void run() {
        const int64_t n = static_cast<int64_t>(a_.size());
        if (threads_ == 1 || n <= 16384) return triad_range(a_.data(), b_.data(), c_.data(), 3, 0, n);
        arena_.execute([&] {
            tbb::parallel_for(
                tbb::blocked_range<int64_t>(0, n, 16384),
                [&](const tbb::blocked_range<int64_t>& r) {
                    triad_range(a_.data(), b_.data(), c_.data(), 3, r.begin(), r.end());
                },
                tbb::static_partitioner());
        });
    }
    // Bytes per second of the last measured seconds per run.
    double bytes_per_second(double seconds) const {
        return static_cast<double>(static_cast<int64_t>(a_.size()) * kTriadBytesPerElement) / seconds;
    }

private:
    tbb::task_arena arena_;
    int threads_;
    std::vector<float> a_, b_, c_;
};

}  // namespace nnplug::bench
