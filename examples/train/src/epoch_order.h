// The order in which an epoch visits the training rows: a uniformly random permutation
// drawn from one 64-bit seed, in parallel, the same whatever the number of threads.
//
// Rao-Sandelius: each row goes to one of kOrderBuckets buckets, drawn from a stream of its
// piece of the rows (a fixed cut into 64 pieces), seeded by (seed, piece); the buckets are
// laid out one after another (rows in increasing order inside each); then each bucket is
// shuffled by Fisher-Yates with its own stream, seeded by (seed, bucket).
// Uniform bucket draws and a uniform shuffle of each bucket make the whole a uniform
// permutation. Every step depends only on the seed and the row count, so oneTBB may split
// the work any way.
#pragma once

#include <tbb/task_arena.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace train {

// Enough buckets that one (a few thousand rows for a data set of a million) is shuffled
// within the core's first-level cache.
constexpr int kOrderBuckets = 256;

class EpochOrder {
public:
    explicit EpochOrder(size_t rows);

    // order() becomes the permutation of [0, rows) that `seed` stands for.
    void draw(uint64_t seed, tbb::task_arena& arena);

    const std::vector<int64_t>& order() const { return order_; }

private:
    std::vector<int64_t> order_;
    // Rows per (piece of the rows, bucket), then the scatter's offsets; where each bucket
    // starts. Sized once.
    std::vector<int64_t> counts_;
    std::vector<int64_t> bucket_start_;
};

}  // namespace train
