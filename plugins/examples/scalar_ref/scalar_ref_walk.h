// What scalar_ref's op files share: the registry each file adds its ops to, and the walk of
// an elementwise op's iteration space one element at a time. Internal to the plugin; only
// the SDK headers are used.
//
// The SCALAR_REF_BUG_* definitions build deliberately wrong variants of the plugin, which the
// conformance kit's tests must see fail (tests/conformance_kit/, ops/*/tests/kit_mutants.cmake).
// A real build defines none of them.
#pragma once

#include <nnplug/dtype_convert.h>
#include <nnplug/plugin_support.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <utility>
#include <vector>

namespace scalar_ref {

// Runs one op on the calling thread; fails (sdk::fail) on data it refuses, writing nothing.
using RunOp = nnplug_status (*)(const nnplug_op_desc& desc);

// The plugin's ops, each added by its file's Registration; scalar_ref.cpp serves them.
inline std::vector<std::pair<int32_t, RunOp>>& registry() {
    static std::vector<std::pair<int32_t, RunOp>> ops;
    return ops;
}

// `const Registration kRegistered{{NNPLUG_OP_..., ...}, run};` in an op file serves those op
// kinds with run. Static objects of a loaded library are built before its entry is called.
struct Registration {
    Registration(std::initializer_list<int32_t> kinds, RunOp run) {
        for (int32_t kind : kinds) registry().emplace_back(kind, run);
    }
};

// A position in the iteration space: index[k] runs over 0..dims[k]-1.
struct Position {
    const nnplug_op_desc& desc;
    int64_t index[NNPLUG_MAX_DIMS] = {};

    // Operand slot's element at this position, counted in elements from its data.
    int64_t element(int slot) const {
        const nnplug_tensor& t = desc.operands[slot];
#ifdef SCALAR_REF_BUG_OFFSET_32BIT  // BUG: element offsets in 32-bit arithmetic
        int32_t e = static_cast<int32_t>(t.offset);
        for (int32_t k = 0; k < desc.ndim; ++k) e += static_cast<int32_t>(index[k] * t.strides[k]);
#else
        int64_t e = t.offset;
        for (int32_t k = 0; k < desc.ndim; ++k) e += index[k] * t.strides[k];
#endif
        return e;
    }
    // The operand's value widened to float32; an absent optional operand is `absent`.
    float load(int slot, float absent = 1.0f) const {
        const nnplug_tensor& t = desc.operands[slot];
        return nnplug::sdk::present(t) ? nnplug::load_as_f32(t.data, t.dtype, element(slot)) : absent;
    }
};

// Rounds a float32 into dtype and widens it back, as a cast to dtype would.
inline float rounded_to(int64_t dtype, float value) {
    if (dtype == NNPLUG_DTYPE_F16) return nnplug::f16_to_f32(nnplug::f32_to_f16(value));
    if (dtype == NNPLUG_DTYPE_BF16) return nnplug::bf16_to_f32(nnplug::f32_to_bf16(value));
    return value;
}

// Writes value, rounded to nearest even, as element `element` of out.
inline void store(const nnplug_tensor& out, int64_t element, float value) {
#ifdef SCALAR_REF_BUG_F16_TRUNCATE  // BUG: float16 rounded towards zero
    if (out.dtype == NNPLUG_DTYPE_F16 && value == value) {
        uint16_t h = nnplug::f32_to_f16(value);
        if (std::abs(nnplug::f16_to_f32(h)) > std::abs(value)) --h;
        std::memcpy(static_cast<char*>(out.data) + element * 2, &h, 2);
        return;
    }
#endif
    nnplug::store_from_f32(out.data, out.dtype, element, value);
}

// Calls value(position) for every element of the iteration space in row-major order and
// writes the results to the output slot `out_slot`: one per element, or, when that output
// is reduced, their sum (in double) or mean as the one element at its offset.
template <typename Value>
nnplug_status for_each_element(const nnplug_op_desc& desc, int out_slot, Value&& value) {
    const nnplug_tensor& out = desc.operands[out_slot];
#ifdef SCALAR_REF_BUG_WRITE_OUTSIDE_VIEW  // BUG: clears out's whole storage, not only its view
    std::memset(out.data, 0, static_cast<size_t>(out.storage_bytes));
#endif
    double sum = 0.0;
    Position at{desc};
    for (int64_t n = 0; n < desc.numel; ++n) {
        const float v = value(at);
        if (nnplug::sdk::reduced(out))
            sum += v;
        else
            store(out, at.element(out_slot), v);
        for (int32_t k = desc.ndim - 1; k >= 0 && ++at.index[k] == desc.dims[k]; --k) at.index[k] = 0;
    }
    if (!nnplug::sdk::reduced(out)) return NNPLUG_OK;
#ifndef SCALAR_REF_BUG_MEAN_NOT_SCALED  // BUG when defined: the mean is left a sum
    if (nnplug::sdk::reduction(desc) == NNPLUG_REDUCTION_MEAN)
        sum /= static_cast<double>(nnplug::sdk::reduce_count(desc));
#endif
    store(out, out.offset, static_cast<float>(sum));
    return NNPLUG_OK;
}

}  // namespace scalar_ref
