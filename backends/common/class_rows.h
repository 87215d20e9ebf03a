// The row model of the ops with a class axis (nnplug_op_desc.class_axis), shared by the
// backends as the strided walkers are for elementwise ops: a call is `rows` rows (every
// position of the dims other than the class axis, in row-major order) of `classes` elements
// each. ClassCall finds an operand's row in O(rank); the row math of each op lives in
// class_ops.h.
#pragma once

#include <nnplug/dtype_convert.h>
#include <nnplug/plugin.h>
#include <nnplug/plugin_support.h>

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace nnplug::common {

// Rows are reduced in fixed chunks of this many (never a thread-dependent split), each chunk
// into double partials, which are then added pairwise: the same bits for any thread count.
constexpr int64_t kClassRowChunk = 256;

// A launch's few values (per chunk, per class) inline up to N of them, so that a small call
// allocates nothing (each allocation is a measurable part of a call of a few rows); on the
// heap beyond.
template <typename T, size_t N>
class SmallValues {
public:
    SmallValues() = default;
    SmallValues(size_t count, T value) { assign(count, value); }
    SmallValues(const SmallValues&) = delete;
    SmallValues& operator=(const SmallValues&) = delete;
    void assign(size_t count, T value) {
        count_ = count;
        if (count > N)
            heap_.assign(count, value);
        else
            std::fill_n(inline_, count, value);
    }
    bool empty() const { return count_ == 0; }
    size_t size() const { return count_; }
    T* data() { return count_ > N ? heap_.data() : inline_; }
    const T* data() const { return count_ > N ? heap_.data() : inline_; }
    T& operator[](size_t i) { return data()[i]; }
    const T& operator[](size_t i) const { return data()[i]; }
    T* begin() { return data(); }
    T* end() { return data() + count_; }
    const T* begin() const { return data(); }
    const T* end() const { return data() + count_; }

private:
    size_t count_ = 0;
    T inline_[N] = {};
    std::vector<T> heap_;
};

// Per-chunk values: a call of up to 2048 rows holds them inline.
template <typename T>
using ChunkValues = SmallValues<T, 8>;

class ClassCall {
public:
    explicit ClassCall(const nnplug_op_desc& desc) : desc_(desc), axis_(nnplug_desc_class_axis(&desc)) {
        classes_ = axis_ >= 0 ? desc.dims[axis_] : 0;
        rows_ = 1;
        for (int32_t k = 0; k < desc.ndim; ++k) {
            if (k == axis_) continue;
            row_dims_[row_ndim_] = desc.dims[k];
            row_dim_of_[row_ndim_++] = k;
            rows_ *= desc.dims[k];
        }
        int spread = 0;  // row dims of more than one row
        for (int32_t k = 0; k < row_ndim_; ++k)
            if (row_dims_[k] > 1) {
                ++spread;
                strided_dim_ = row_dim_of_[k];
            }
        if (spread > 1) strided_dim_ = -2;
        const nnplug_attr* ignore = nnplug_find_attr(&desc, NNPLUG_ATTR_IGNORE_INDEX);
        has_ignore_ = ignore != nullptr && ignore->type == NNPLUG_ATTR_I64;
        ignore_ = has_ignore_ ? ignore->value.i64 : 0;
        reduction_ = sdk::reduction(desc);
    }

    const nnplug_op_desc& desc() const { return desc_; }
    bool valid() const { return axis_ >= 0 && axis_ < desc_.ndim && classes_ > 0; }
    int64_t rows() const { return rows_; }
    int64_t classes() const { return classes_; }
    int64_t reduction() const { return reduction_; }
    int64_t chunks() const { return (rows_ + kClassRowChunk - 1) / kClassRowChunk; }
    const nnplug_tensor& operand(int slot) const { return desc_.operands[slot]; }
    bool present(int slot) const { return nnplug_operand_present(&desc_, slot); }
    int64_t class_stride(int slot) const { return desc_.operands[slot].strides[axis_]; }

    // The element (from data) where operand `slot`'s row starts: its class 0.
    int64_t row_start(int slot, int64_t row) const {
        const nnplug_tensor& t = desc_.operands[slot];
        if (t.flags & NNPLUG_OPERAND_REDUCED) return t.offset;
        if (strided_dim_ >= -1) return t.offset + (strided_dim_ >= 0 ? row * t.strides[strided_dim_] : 0);
        int64_t element = t.offset;
        for (int32_t k = row_ndim_ - 1; k >= 0; --k) {
            const int64_t dim = row_dims_[k];
            element += (row % dim) * t.strides[row_dim_of_[k]];
            row /= dim;
        }
        return element;
    }

    // Whether the rows lie along at most one dim (an (N, C) call): row r of an operand then
    // starts at row_start(slot, 0) + r * row_stride(slot).
    bool rows_strided() const { return strided_dim_ >= -1; }
    int64_t row_stride(int slot) const {
        return strided_dim_ >= 0 ? desc_.operands[slot].strides[strided_dim_] : 0;
    }

    float load(int slot, int64_t element) const {
        return load_as_f32(desc_.operands[slot].data, desc_.operands[slot].dtype, element);
    }
    void store(int slot, int64_t element, float value) const {
        store_from_f32(desc_.operands[slot].data, desc_.operands[slot].dtype, element, value);
    }
    // The class index the target at `slot` holds for row `row`, as an int64.
    int64_t target(int slot, int64_t row) const { return target_at(slot, row_start(slot, row)); }
    // The class index at element `element` of the target at `slot`.
    int64_t target_at(int slot, int64_t element) const {
        const nnplug_tensor& t = desc_.operands[slot];
        switch (t.dtype) {
            case NNPLUG_DTYPE_I32:
                return static_cast<const int32_t*>(t.data)[element];
            case NNPLUG_DTYPE_U8:
                return static_cast<const uint8_t*>(t.data)[element];
            default:
                return static_cast<const int64_t*>(t.data)[element];
        }
    }
    bool ignored(int64_t target) const { return has_ignore_ && target == ignore_; }
    bool in_range(int64_t target) const { return target >= 0 && target < classes_; }
    bool valid_target(int64_t target) const {
        return static_cast<uint64_t>(target) < static_cast<uint64_t>(classes_) ||
               (has_ignore_ && target == ignore_);
    }

    // The target at `slot` as one int64 per row in row order (an (N) or (N, d1, ...) target
    // laid out densely, the common case), or null.
    const int64_t* dense_targets(int slot) const {
        const nnplug_tensor& t = desc_.operands[slot];
        if (t.dtype != NNPLUG_DTYPE_I64 || (t.flags & NNPLUG_OPERAND_REDUCED) || !rows_strided())
            return nullptr;
        if (rows_ > 1 && row_stride(slot) != 1) return nullptr;
        return static_cast<const int64_t*>(t.data) + t.offset;
    }

    // The first row in [begin, end) whose target is neither a class nor ignored, or -1.
    int64_t first_bad_target(int target_slot, int64_t begin, int64_t end) const {
        if (const int64_t* targets = dense_targets(target_slot)) {
            // Without branches first (the compiler vectorizes it): a bad target is rare.
            bool any_bad = false;
            for (int64_t row = begin; row < end; ++row) any_bad |= !valid_target(targets[row]);
            if (!any_bad) return -1;
            for (int64_t row = begin; row < end; ++row) {
                const int64_t t = targets[row];
                if (!in_range(t) && !ignored(t)) return row;
            }
            return -1;
        }
        for (int64_t row = begin; row < end; ++row) {
            const int64_t t = target(target_slot, row);
            if (!in_range(t) && !ignored(t)) return row;
        }
        return -1;
    }

    // The kernel's refusal of that row: operand, element and value, one line.
    std::string bad_target_message(int64_t row, int64_t value) const {
        char text[256];
        if (has_ignore_)
            std::snprintf(text, sizeof text,
                          "target element %" PRId64 " is %" PRId64 ", not a class index in [0, %" PRId64
                          ") nor ignoreIndex %" PRId64,
                          row, value, classes_, ignore_);
        else
            std::snprintf(text, sizeof text,
                          "target element %" PRId64 " is %" PRId64 ", not a class index in [0, %" PRId64 ")",
                          row, value, classes_);
        return text;
    }

private:
    const nnplug_op_desc& desc_;
    int32_t axis_;
    int64_t classes_ = 0;
    int64_t rows_ = 1;
    int64_t row_dims_[NNPLUG_MAX_DIMS] = {};
    int32_t row_dim_of_[NNPLUG_MAX_DIMS] = {};
    int32_t row_ndim_ = 0;
    int32_t strided_dim_ = -1;  // the one row dim of several rows (-1: none; -2: several such dims)
    bool has_ignore_ = false;
    int64_t ignore_ = 0;
    int64_t reduction_ = NNPLUG_REDUCTION_NONE;
};

}  // namespace nnplug::common
