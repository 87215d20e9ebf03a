// The distribution of a step: which shards each process computes, the records it sends
// to the combine and where every process's part lands. Records sit at 64-byte boundaries
// in every process: where a shard's gradient lands in memory decides how Eigen splits its
// vector loops (aligned packets, scalar ends), so it must not depend on the shard's place
// in its process's run of shards.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "shard_tree.h"

namespace train {

constexpr int64_t kAlignment = 64;
inline int64_t aligned_bytes(int64_t bytes) {
    return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

// What a shard's backward writes: its loss sum, correct count and gradient.
struct ShardRecordLayout {
    int64_t bytes = 0;  // a multiple of kAlignment
    explicit ShardRecordLayout(int64_t parameter_count) : bytes(aligned_bytes(16 + 4 * parameter_count)) {}
};
// What a process sends to the combine: a header carrying its stop request, then one record
// per tree block it holds (shard_tree.h): a one-shard block as the shard's record, a larger
// one as its loss sum, correct count and gradient sum in double.
struct BlockRecordLayout {
    int64_t bytes = 0;
    explicit BlockRecordLayout(int64_t parameter_count) : bytes(aligned_bytes(16 + 8 * parameter_count)) {}
};
constexpr int64_t kHeaderBytes = kAlignment;

inline char* aligned_start(std::vector<double>& storage) {
    const auto address = reinterpret_cast<uintptr_t>(storage.data());
    return reinterpret_cast<char*>((address + kAlignment - 1) / kAlignment * kAlignment);
}

// Both records: the loss sum at 0, the correct count at 8, the gradient from here on.
constexpr int64_t kGradientOffset = 16;

struct ShardRecord {
    double* loss_sum;
    int64_t* correct;
    float* gradient;
};
inline ShardRecord record_at(char* base) {
    return {reinterpret_cast<double*>(base), reinterpret_cast<int64_t*>(base + 8),
            reinterpret_cast<float*>(base + kGradientOffset)};
}

struct BlockRecord {
    double* loss_sum;
    int64_t* correct;
    double* gradient;
};
inline BlockRecord block_record_at(char* base) {
    return {reinterpret_cast<double*>(base), reinterpret_cast<int64_t*>(base + 8),
            reinterpret_cast<double*>(base + kGradientOffset)};
}

// The shards [first, last) of a batch's `count` that rank r of n takes: contiguous, as
// even as they divide.
inline std::pair<int64_t, int64_t> shards_of_rank(int64_t count, int rank, int ranks) {
    return {count * rank / ranks, count * (rank + 1) / ranks};
}

// Who sends which tree blocks for a batch of `shards` shards, and where each process's
// part of the combine lands.
struct CombinePlan {
    std::vector<std::vector<TreeBlock>> blocks;        // per process
    std::vector<std::vector<int64_t>> record_offsets;  // per process and block, in its part
    std::vector<int64_t> part_bytes, part_offsets;
    int64_t total_bytes = 0;
    CombinePlan(int64_t shards, int ranks, int64_t shard_bytes, int64_t block_bytes) {
        for (int r = 0; r < ranks; ++r) {
            const auto [first, last] = shards_of_rank(shards, r, ranks);
            blocks.push_back(tree_blocks(first, last));
            record_offsets.emplace_back();
            int64_t bytes = kHeaderBytes;
            for (const TreeBlock& block : blocks.back()) {
                record_offsets.back().push_back(bytes);
                bytes += block.size == 1 ? shard_bytes : block_bytes;
            }
            part_bytes.push_back(bytes);
            part_offsets.push_back(total_bytes);
            total_bytes += bytes;
        }
    }
};

// Parameters per slice of the tree sums: the sums' scratch sits on the stack.
constexpr size_t kSliceParameters = 256;
constexpr int kMaxTreeLevels = 9;  // a tree over kMaxShards = 256 shards

// The tree level of a block of `size` shards (log2, rounded up).
inline int tree_level(int64_t size) {
    int level = 0;
    while ((int64_t{1} << level) < size) ++level;
    return level;
}

}  // namespace train
