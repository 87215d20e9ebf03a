#include "shard_tree.h"

namespace train {

std::vector<TreeBlock> tree_blocks(int64_t first, int64_t last) {
    std::vector<TreeBlock> blocks;
    while (first < last) {
        int64_t size = 1;
        while ((first % (2 * size)) == 0 && first + 2 * size <= last) size *= 2;
        blocks.push_back({first, size});
        first += size;
    }
    return blocks;
}

int64_t tree_width(int64_t shards) {
    int64_t width = 1;
    while (width < shards) width *= 2;
    return width;
}

int tree_levels(int64_t max_shards) {
    int levels = 1;
    for (int64_t width = 1; width < max_shards; width *= 2) ++levels;
    return levels;
}

}  // namespace train
