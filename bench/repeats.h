// The repetitions of one measurement: the best counts, and how far the next best lies from
// it says whether the best can be trusted. On a shared machine a neighbour's burst slows
// some repetitions; when even the two fastest disagree, a ratio built on the best is noise.
#ifndef NNPLUG_BENCH_REPEATS_H
#define NNPLUG_BENCH_REPEATS_H

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace nnplug::bench {

class Repeats {
public:
    void add(double seconds) { times_.push_back(seconds); }
    size_t count() const { return times_.size(); }

    // The fastest repetition, NaN before the first.
    double best() const {
        if (times_.empty()) return std::numeric_limits<double>::quiet_NaN();
        return *std::min_element(times_.begin(), times_.end());
    }

    // (second fastest - fastest) / fastest; NaN with fewer than two repetitions.
    double spread() const {
        if (times_.size() < 2) return std::numeric_limits<double>::quiet_NaN();
        std::vector<double> sorted = times_;
        std::partial_sort(sorted.begin(), sorted.begin() + 2, sorted.end());
        return (sorted[1] - sorted[0]) / sorted[0];
    }

    // Whether the best is reproduced within max_spread (an unknown spread is not).
    bool steady(double max_spread) const {
        const double s = spread();
        return !std::isnan(s) && s <= max_spread;
    }

private:
    std::vector<double> times_;
};

}  // namespace nnplug::bench

#endif  // NNPLUG_BENCH_REPEATS_H
