// The logistic model's loops over a batch's rows: a dot product per row (forward) and the
// rows summed with a weight each (backward). They are compiled for every instruction set
// Highway targets (SSE2 to AVX-512 on x86) and the widest this CPU has is chosen at run
// time; the arithmetic is written in sixteen-float vectors, which a narrower target
// splits, and is never contracted into fused multiply-adds, so every target gives the same
// bits.
#pragma once

#include <cstdint>

#include "batch_rows.h"

namespace train {

// logits[k] = (batch row k) . weight + bias for k in [begin, end): one fixed order of
// additions, whatever the row's place in memory. With an index, rows are prefetched
// kPrefetchRows ahead; with `gathered`, row k is also copied to gathered + k * columns.
void row_logits(const BatchRows& rows, int64_t begin, int64_t end, int64_t columns, const float* weight,
                float bias, float* logits, float* gathered);

// sum[j] += delta[i] * x[i][j] for every column j in [0, columns), taking the rows
// i = 0, 1, ..., count - 1 in turn for each column.
void add_row_products(float* sum, const float* delta, const float* const* x, int64_t count, int64_t columns);

}  // namespace train
