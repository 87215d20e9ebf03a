// Where a batch's rows sit, and how a loop over scattered rows reads ahead.
#pragma once

#include <algorithm>
#include <cstdint>

#include "prefetch_line.h"

namespace train {

// The samples of a batch: sample k is row index[k] of `data` (row-major, one column per
// model input, `stride` floats from one row's start to the next, 0 for no padding), or row
// k when index is null. With an index, `count` rows of the batch may be read ahead of the
// shard being computed (0: none beyond the shard's own).
struct BatchRows {
    const float* data = nullptr;
    const int64_t* index = nullptr;
    int64_t stride = 0;
    int64_t count = 0;
    const float* row(int64_t k, int64_t columns) const {
        return data + (index ? index[k] : k) * (stride ? stride : columns);
    }
};

// Rows ahead to prefetch: a batch's rows are scattered over the data set, and a dot
// product per row leaves too few loads in flight to hide the memory's latency. Reads run
// ahead across the shard's end into the batch's next rows (the thread's next shard, most
// often), so that no shard starts cold.
constexpr int64_t kPrefetchRows = 32;

// Prefetches batch row k of a loop over rows up to `end`, if it is one the loop or the
// batch (rows.count) will read.
inline void prefetch_row(const BatchRows& rows, int64_t k, int64_t end, int64_t columns) {
    if (k >= std::max(end, rows.count)) return;
    const char* row = reinterpret_cast<const char*>(rows.row(k, columns));
    const int64_t bytes = columns * static_cast<int64_t>(sizeof(float));
    for (int64_t offset = 0; offset < bytes; offset += 64) prefetch_line(row + offset);
    // A row that starts inside a line may end in one the loop did not reach (rows of the
    // row table start on a line and never do).
    if (reinterpret_cast<uintptr_t>(row) % 64 != 0) prefetch_line(row + bytes - 1);
}

}  // namespace train
