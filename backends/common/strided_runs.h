// Walks a linear range of an op's iteration space as runs along the innermost
// dimension, tracking every operand's element offset, so kernels see 1-d runs.
// Operand-generic: it walks all of desc.operands[0..operand_count), whatever the op.
#pragma once

#include <nnplug/plugin.h>

#include <algorithm>
#include <array>
#include <cstdint>

namespace nnplug::common {

// Per operand slot: an element offset, or the stride along the innermost dimension.
using SlotOffsets = std::array<int64_t, NNPLUG_MAX_OPERANDS>;

// Calls run(offsets, inner_strides, length) for every inner run within [begin, end);
// offsets are each operand's element offset of the run's first element. A reduced
// operand (all strides 0) stays at its offset.
template <typename RunFn>
void for_each_run(const nnplug_op_desc& desc, int64_t begin, int64_t end, RunFn&& run) {
    const int operands = desc.operand_count;
    const int ndim = desc.ndim;
    SlotOffsets inner{};
    SlotOffsets offset{};
    if (ndim == 0) {  // a 0-d iteration space has exactly one element
        for (int o = 0; o < operands; ++o) offset[o] = desc.operands[o].offset;
        if (begin < end) run(offset, inner, int64_t{1});
        return;
    }
    if (ndim == 1) {  // every all-contiguous call arrives coalesced to this: one run, no carries
        for (int o = 0; o < operands; ++o) {
            inner[o] = desc.operands[o].strides[0];
            offset[o] = desc.operands[o].offset + begin * inner[o];
        }
        if (begin < end) run(offset, inner, end - begin);
        return;
    }
    std::array<int64_t, NNPLUG_MAX_DIMS> index{};
    int64_t remainder = begin;
    for (int k = ndim - 1; k >= 0; --k) {
        index[k] = remainder % desc.dims[k];
        remainder /= desc.dims[k];
    }
    for (int o = 0; o < operands; ++o) {
        const nnplug_tensor& t = desc.operands[o];
        inner[o] = t.strides[ndim - 1];
        offset[o] = t.offset;
        for (int k = 0; k < ndim; ++k) offset[o] += index[k] * t.strides[k];
    }
    const int64_t inner_size = desc.dims[ndim - 1];
    int64_t position = begin;
    while (position < end) {
        const int64_t length = std::min(inner_size - index[ndim - 1], end - position);
        run(offset, inner, length);
        position += length;
        if (position >= end) break;
        // Step to the start of the next run: carry through the outer dimensions.
        for (int o = 0; o < operands; ++o) offset[o] += length * inner[o];
        index[ndim - 1] += length;
        for (int k = ndim - 1; k > 0 && index[k] == desc.dims[k]; --k) {
            index[k] = 0;
            ++index[k - 1];
            for (int o = 0; o < operands; ++o)
                offset[o] += desc.operands[o].strides[k - 1] - desc.dims[k] * desc.operands[o].strides[k];
        }
    }
}

// The same walk for one operand: run(element_offset, inner_stride, length).
template <typename RunFn>
void for_each_run(const nnplug_op_desc& desc, const nnplug_tensor& t, int64_t begin, int64_t end,
                  RunFn&& run) {
    nnplug_op_desc single = {};
    single.ndim = desc.ndim;
    single.operand_count = 1;
    std::copy(desc.dims, desc.dims + NNPLUG_MAX_DIMS, single.dims);
    single.numel = desc.numel;
    single.operands[0] = t;
    for_each_run(single, begin, end,
                 [&](const SlotOffsets& offset, const SlotOffsets& inner, int64_t length) {
                     run(offset[0], inner[0], length);
                 });
}

}  // namespace nnplug::common
