#include "epoch_order.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <utility>

#include "random_stream.h"

namespace train {
namespace {

// Pieces of the rows counted and scattered as one task each: fixed, so the layout of a
// bucket (rows in increasing order) does not depend on the threads.
constexpr int64_t kPieces = 64;

// Swap partners drawn before the swaps that use them.
constexpr uint64_t kDrawsAhead = 64;

// SplitMix64's output function: a well-mixed 64-bit value of any 64-bit input.
inline uint64_t mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ULL;

inline int bucket_of(uint64_t seed, uint64_t row) {
    return static_cast<int>(mix(seed + kGolden * (row + 1)) >> 56);  // 256 buckets: the top 8 bits
}
static_assert(kOrderBuckets == 256, "bucket_of takes the top 8 bits");

// A SplitMix64 stream.
class Stream {
public:
    explicit Stream(uint64_t seed) : state_(seed) {}
    uint64_t next() { return mix(state_ += kGolden); }
    uint64_t below(uint64_t bound) {
        return uniform_below(bound, [this] { return next(); });
    }

private:
    uint64_t state_;
};

}  // namespace

EpochOrder::EpochOrder(size_t rows)
    : order_(rows),
      buckets_(rows),
      counts_(static_cast<size_t>(kPieces * kOrderBuckets)),
      bucket_start_(kOrderBuckets + 1) {}

void EpochOrder::draw(uint64_t seed, tbb::task_arena& arena) {
    const auto rows = static_cast<int64_t>(order_.size());
    const auto piece_range = [rows](int64_t piece) {
        return std::pair<int64_t, int64_t>{rows * piece / kPieces, rows * (piece + 1) / kPieces};
    };
    arena.execute([&] {
        // Count each piece's rows per bucket.
        tbb::parallel_for(tbb::blocked_range<int64_t>(0, kPieces, 1), [&](const tbb::blocked_range<int64_t>& r) {
            for (int64_t piece = r.begin(); piece < r.end(); ++piece) {
                int64_t* count = counts_.data() + piece * kOrderBuckets;
                std::fill(count, count + kOrderBuckets, 0);
                const auto [first, last] = piece_range(piece);
                for (int64_t row = first; row < last; ++row) {
                    const int bucket = bucket_of(seed, static_cast<uint64_t>(row));
                    buckets_[static_cast<size_t>(row)] = static_cast<uint8_t>(bucket);
                    ++count[bucket];
                }
            }
        });
        // Bucket-major offsets: bucket 0's rows from piece 0, 1, ..., then bucket 1's.
        std::vector<int64_t>& bucket_start = bucket_start_;
        int64_t offset = 0;
        for (int b = 0; b < kOrderBuckets; ++b) {
            bucket_start[static_cast<size_t>(b)] = offset;
            for (int64_t piece = 0; piece < kPieces; ++piece) {
                int64_t& count = counts_[static_cast<size_t>(piece * kOrderBuckets + b)];
                const int64_t rows_here = count;
                count = offset;
                offset += rows_here;
            }
        }
        bucket_start[kOrderBuckets] = offset;
        // Scatter each row to its bucket.
        tbb::parallel_for(tbb::blocked_range<int64_t>(0, kPieces, 1), [&](const tbb::blocked_range<int64_t>& r) {
            for (int64_t piece = r.begin(); piece < r.end(); ++piece) {
                int64_t* next = counts_.data() + piece * kOrderBuckets;
                const auto [first, last] = piece_range(piece);
                for (int64_t row = first; row < last; ++row)
                    order_[static_cast<size_t>(next[buckets_[static_cast<size_t>(row)]]++)] = row;
            }
        });
        // Shuffle each bucket with its own stream.
        tbb::parallel_for(tbb::blocked_range<int>(0, kOrderBuckets, 1), [&](const tbb::blocked_range<int>& r) {
            for (int b = r.begin(); b < r.end(); ++b) {
                Stream stream(mix(seed ^ mix(static_cast<uint64_t>(b) + 1)));
                int64_t* items = order_.data() + bucket_start[static_cast<size_t>(b)];
                const auto count = static_cast<uint64_t>(bucket_start[static_cast<size_t>(b) + 1] -
                                                         bucket_start[static_cast<size_t>(b)]);
                // Fisher-Yates, its draws taken kDrawsAhead at a time: the stream's
                // arithmetic then overlaps, instead of each swap waiting for its draw.
                uint64_t partner[kDrawsAhead];
                for (uint64_t i = count; i > 1;) {
                    const uint64_t swaps = std::min<uint64_t>(kDrawsAhead, i - 1);
                    for (uint64_t t = 0; t < swaps; ++t) partner[t] = stream.below(i - t);
                    for (uint64_t t = 0; t < swaps; ++t) std::swap(items[i - 1 - t], items[partner[t]]);
                    i -= swaps;
                }
            }
        });
    });
}

}  // namespace train
