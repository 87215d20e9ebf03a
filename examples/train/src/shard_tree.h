// The sum of a batch's shard results along one fixed binary tree over the shard indices,
// so that it is the same bytes however the shards are spread over processes.
//
// The tree over S shards has the shards as leaves and a node for every aligned block
// [k * 2^h, (k + 1) * 2^h) that holds at least one shard; a node's value is its left
// child's plus its right child's (in double), or the left child's alone when the right one
// holds no shard. A process holding shards [first, last) adds up the aligned blocks that
// tile its range (tree_blocks: at most 2 log2 S of them) and sends those; every process
// then finishes the tree from everyone's blocks. Each block is the same node computed the
// same way wherever it is, so the root does not depend on how [0, S) was cut.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace train {

struct TreeBlock {
    int64_t first = 0;  // the first shard, a multiple of size
    int64_t size = 1;   // a power of two
};

// The largest aligned blocks that tile [first, last), in order.
std::vector<TreeBlock> tree_blocks(int64_t first, int64_t last);

// The smallest power of two >= shards: the root's size.
int64_t tree_width(int64_t shards);

// Levels of a tree over at most max_shards shards (log2 of its width, plus the leaves):
// tree_sum's scratch holds this many times its width.
int tree_levels(int64_t max_shards);

// Node [first, first + size) of the tree over `shards` leaves, for values [begin, end) of
// each node, into out[0, end - begin). block(first, size) returns the node's values as
// doubles when they are known (indexed like the values: element i at [i]), else null;
// leaf(s) returns shard s's values (float or double), asked for only where no block is
// known. scratch holds (levels - 1) * (end - begin) doubles.
template <typename Leaf, typename Block>
void tree_sum(int64_t first, int64_t size, int64_t shards, const Leaf& leaf, const Block& block, size_t begin,
              size_t end, double* out, double* scratch) {
    const size_t width = end - begin;
    if (const double* known = block(first, size)) {
        for (size_t i = 0; i < width; ++i) out[i] = known[begin + i];
        return;
    }
    if (size == 1) {
        const auto* values = leaf(first);
        for (size_t i = 0; i < width; ++i) out[i] = static_cast<double>(values[begin + i]);
        return;
    }
    const int64_t half = size / 2;
    tree_sum(first, half, shards, leaf, block, begin, end, out, scratch);
    if (first + half >= shards) return;
    tree_sum(first + half, half, shards, leaf, block, begin, end, scratch, scratch + width);
    for (size_t i = 0; i < width; ++i) out[i] += scratch[i];
}

}  // namespace train
