#include "epoch_order.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <utility>

#include "prefetch_line.h"
#include "random_stream.h"

namespace train {
namespace {

// Pieces of the rows counted and scattered as one task each: fixed, so the layout of a
// bucket (rows in increasing order) does not depend on the threads.
constexpr int64_t kPieces = 64;

// Swap partners drawn before the swaps that use them.
constexpr uint64_t kDrawsAhead = 64;

// Order entries in a 64-byte cache line.
constexpr int64_t kLineItems = 64 / sizeof(int64_t);

// SplitMix64's output function: a well-mixed 64-bit value of any 64-bit input.
inline uint64_t mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ULL;

// A SplitMix64 stream.
class Stream {
public:
    explicit Stream(uint64_t seed) : state_(seed) {}
    uint64_t next() { return mix(state_ += kGolden); }
    // Uniform in [0, bound): for a bound below 2^32 from the words' 32-bit halves (low,
    // then high), by Lemire's method with a 32 x 32-bit product; else from whole words.
    uint64_t below(uint64_t bound) {
        if (bound >= (uint64_t{1} << 32)) return uniform_below(bound, [this] { return next(); });
        const auto bound32 = static_cast<uint32_t>(bound);
        uint64_t product = uint64_t{next_half()} * bound;
        auto low = static_cast<uint32_t>(product);
        if (low < bound32) {
            const uint32_t threshold = (0u - bound32) % bound32;
            while (low < threshold) {
                product = uint64_t{next_half()} * bound;
                low = static_cast<uint32_t>(product);
            }
        }
        return product >> 32;
    }

private:
    uint32_t next_half() {
        if (!half_left_) {
            word_ = next();
            half_left_ = true;
            return static_cast<uint32_t>(word_);
        }
        half_left_ = false;
        return static_cast<uint32_t>(word_ >> 32);
    }

    uint64_t state_;
    uint64_t word_ = 0;
    bool half_left_ = false;
};

// Stream k of a draw: streams 0 to 255 shuffle the buckets, stream 256 + p gives the
// buckets of piece p's rows.
inline uint64_t stream_seed(uint64_t seed, uint64_t k) {
    return mix(seed ^ mix(k + 1));
}

// Each row's bucket is one byte of its piece's stream, eight rows a word, low byte first:
// visit(row, bucket) for the piece's rows in order.
template <typename Visit>
void for_each_bucket(uint64_t seed, int64_t piece, int64_t first, int64_t last, Visit&& visit) {
    static_assert(kOrderBuckets == 256, "a bucket is one byte");
    Stream draws(stream_seed(seed, kOrderBuckets + static_cast<uint64_t>(piece)));
    for (int64_t row = first; row < last; row += 8) {
        uint64_t word = draws.next();
        const int64_t here = std::min<int64_t>(8, last - row);
        for (int64_t k = 0; k < here; ++k, word >>= 8) visit(row + k, static_cast<int>(word & 0xff));
    }
}

}  // namespace

EpochOrder::EpochOrder(size_t rows)
    : order_(rows), counts_(static_cast<size_t>(kPieces * kOrderBuckets)), bucket_start_(kOrderBuckets + 1) {}

void EpochOrder::draw(uint64_t seed, tbb::task_arena& arena) {
    const auto rows = static_cast<int64_t>(order_.size());
    if (rows == 0) return;
    const auto piece_range = [rows](int64_t piece) {
        return std::pair<int64_t, int64_t>{rows * piece / kPieces, rows * (piece + 1) / kPieces};
    };
    arena.execute([&] {
        // Count each piece's rows per bucket.
        tbb::parallel_for(tbb::blocked_range<int64_t>(0, kPieces, 1),
                          [&](const tbb::blocked_range<int64_t>& r) {
                              for (int64_t piece = r.begin(); piece < r.end(); ++piece) {
                                  int64_t* count = counts_.data() + piece * kOrderBuckets;
                                  std::fill(count, count + kOrderBuckets, 0);
                                  const auto [first, last] = piece_range(piece);
                                  for_each_bucket(seed, piece, first, last,
                                                  [count](int64_t, int bucket) { ++count[bucket]; });
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
        // Scatter each row to its bucket (the piece's stream drawn again). The line a bucket
        // writes next is fetched ahead: the writes land all over the order.
        int64_t* order = order_.data();
        tbb::parallel_for(
            tbb::blocked_range<int64_t>(0, kPieces, 1), [&](const tbb::blocked_range<int64_t>& r) {
                for (int64_t piece = r.begin(); piece < r.end(); ++piece) {
                    int64_t* next = counts_.data() + piece * kOrderBuckets;
                    for (int b = 0; b < kOrderBuckets; ++b)
                        prefetch_line(reinterpret_cast<const char*>(order + std::min(next[b], rows - 1)));
                    const auto [first, last] = piece_range(piece);
                    for_each_bucket(seed, piece, first, last, [&](int64_t row, int bucket) {
                        const int64_t at = next[bucket]++;
                        order[at] = row;
                        prefetch_line(
                            reinterpret_cast<const char*>(order + std::min(at + kLineItems, rows - 1)));
                    });
                }
            });
        // Shuffle each bucket with its own stream.
        tbb::parallel_for(
            tbb::blocked_range<int>(0, kOrderBuckets, 1), [&](const tbb::blocked_range<int>& r) {
                for (int b = r.begin(); b < r.end(); ++b) {
                    Stream stream(stream_seed(seed, static_cast<uint64_t>(b)));
                    int64_t* items = order_.data() + bucket_start[static_cast<size_t>(b)];
                    const auto count = static_cast<uint64_t>(bucket_start[static_cast<size_t>(b) + 1] -
                                                             bucket_start[static_cast<size_t>(b)]);
                    // The bucket's lines are fetched first, in order, before the random swaps.
                    for (uint64_t k = 0; k < count; k += kLineItems)
                        prefetch_line(reinterpret_cast<const char*>(items + k));
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
