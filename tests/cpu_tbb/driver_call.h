// Descriptors as the runtime builds them, over operand storage the test owns, for the
// tests of cpu_tbb's op-agnostic driver.
#pragma once

#include <gtest/gtest.h>
#include <nnplug/dtype_convert.h>
#include <nnplug/plugin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "elementwise.h"

namespace nnplug::test {

using nnplug::cpu::ElementwiseCall;

// Storage of one operand: values of a dtype, read and written as float32.
struct Storage {
    int32_t dtype = NNPLUG_DTYPE_F32;
    std::vector<uint32_t> words;  // 4-byte aligned for every dtype

    Storage(int32_t type, size_t count) : dtype(type), words((count * nnplug_dtype_size(type) + 3) / 4) {}
    void* data() { return words.data(); }
    float get(int64_t i) const { return nnplug::load_as_f32(words.data(), dtype, i); }
    void set(int64_t i, float v) { nnplug::store_from_f32(words.data(), dtype, i, v); }
};

// A descriptor of rank `dims.size()`; operands are added with their strides.
struct Call {
    nnplug_op_desc desc{};

    Call(int32_t op, std::vector<int64_t> dims, int reduction, int operand_count) {
        desc.struct_size = sizeof desc;
        desc.op = op;
        desc.ndim = static_cast<int32_t>(dims.size());
        desc.operand_count = operand_count;
        desc.numel = 1;
        for (size_t k = 0; k < dims.size(); ++k) {
            desc.dims[k] = dims[k];
            desc.numel *= dims[k];
        }
        desc.attr_count = 3;
        desc.attrs[0] = attr_i64(NNPLUG_ATTR_REDUCTION, reduction);
        desc.attrs[1].key = NNPLUG_ATTR_SCALE;
        desc.attrs[1].type = NNPLUG_ATTR_F64;
        const bool mean = reduction == NNPLUG_REDUCTION_MEAN;
        desc.attrs[1].value.f64 = mean ? 1.0 / static_cast<double>(desc.numel) : 1.0;
        desc.attrs[2] = attr_i64(NNPLUG_ATTR_REDUCE_COUNT, desc.numel);
    }
    // The promoted dtype of the inputs that take part in promotion (absent: float32).
    void promote_to(int32_t dtype) {
        desc.attrs[desc.attr_count++] = attr_i64(NNPLUG_ATTR_PROMOTED_DTYPE, dtype);
    }
    static nnplug_attr attr_i64(uint32_t key, int64_t value) {
        nnplug_attr attr{};
        attr.key = key;
        attr.type = NNPLUG_ATTR_I64;
        attr.value.i64 = value;
        return attr;
    }
    void operand(int slot, Storage& storage, std::vector<int64_t> strides, uint32_t flags = 0) {
        nnplug_tensor& t = desc.operands[slot];
        t.dtype = storage.dtype;
        t.flags = NNPLUG_OPERAND_PRESENT | flags;
        t.data = storage.data();
        t.storage_bytes = static_cast<int64_t>(storage.words.size() * 4);
        for (size_t k = 0; k < strides.size(); ++k) t.strides[k] = strides[k];
    }
    // Element offset of operand slot at linear index i of the iteration space.
    int64_t element(int slot, int64_t i) const {
        int64_t offset = desc.operands[slot].offset;
        for (int k = desc.ndim - 1; k >= 0; --k) {
            offset += (i % desc.dims[k]) * desc.operands[slot].strides[k];
            i /= desc.dims[k];
        }
        return offset;
    }
    // Runs the call in ranges of `range` elements; in_place: whether runs must be read in place.
    void run(const nnplug::cpu::VectorKernels& kernels, int64_t range, bool in_place) const {
        const ElementwiseCall call(kernels, desc);
        EXPECT_EQ(call.reads_in_place(), in_place);
        for (int64_t begin = 0; begin < desc.numel; begin += range)
            call.compute_range(begin, std::min(desc.numel, begin + range));
    }
};

inline Storage random_storage(int32_t dtype, size_t count, float low, float high, unsigned seed) {
    Storage storage(dtype, count);
    std::mt19937 random(seed);
    std::uniform_real_distribution<float> values(low, high);
    for (size_t i = 0; i < count; ++i) storage.set(static_cast<int64_t>(i), values(random));
    return storage;
}

inline bool same_bits_or_both_nan(float a, float b) {
    return (std::isnan(a) && std::isnan(b)) || nnplug::float_bits(a) == nnplug::float_bits(b);
}

inline float rounded(int32_t dtype, float v) {
    Storage one(dtype, 1);
    one.set(0, v);
    return one.get(0);
}

}  // namespace nnplug::test
