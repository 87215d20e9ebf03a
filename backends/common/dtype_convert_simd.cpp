// Compiled once per target instruction set; the entry points dispatch at run time.
// clang-format off: foreach_target.h must stay first, before highway.h
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "dtype_convert_simd.cpp"
#include <hwy/foreach_target.h>
// clang-format on

#include <hwy/highway.h>

#include <cstddef>
#include <cstring>

#include "dtype_convert_simd.h"
#include "vector_dtype-inl.h"

HWY_BEFORE_NAMESPACE();
namespace nnplug::simd::HWY_NAMESPACE {

template <int32_t Dtype>
void convert_to(const Raw<Dtype>* source, float* into, size_t count) {
    const DF d;
    const size_t lanes = hn::Lanes(d);
    size_t i = 0;
    for (; i + lanes <= count; i += lanes) hn::StoreU(load<Dtype>(d, source + i), d, into + i);
    for (; i < count; ++i) into[i] = load_as_f32(source, Dtype, static_cast<int64_t>(i));
}

template <int32_t Dtype>
void convert_from(const float* source, Raw<Dtype>* into, size_t count) {
    const DF d;
    const size_t lanes = hn::Lanes(d);
    size_t i = 0;
    for (; i + lanes <= count; i += lanes) store<Dtype, false>(d, hn::LoadU(d, source + i), into + i);
    if (i == count) return;
    HWY_ALIGN float lanes_in[kMaxLanes] = {};
    HWY_ALIGN Raw<Dtype> lanes_out[kMaxLanes];
    std::memcpy(lanes_in, source + i, (count - i) * sizeof(float));
    store<Dtype, false>(d, hn::Load(d, lanes_in), lanes_out);
    std::memcpy(into + i, lanes_out, (count - i) * sizeof(Raw<Dtype>));
}

template <int32_t Dtype>
void round_through(float* values, size_t count) {
    const DF d;
    const size_t lanes = hn::Lanes(d);
    HWY_ALIGN Raw<Dtype> narrow[kMaxLanes];
    for (size_t i = 0; i < count; i += lanes) {
        const size_t n = count - i < lanes ? count - i : lanes;
        HWY_ALIGN float lanes_in[kMaxLanes] = {};
        std::memcpy(lanes_in, values + i, n * sizeof(float));
        store<Dtype, false>(d, hn::Load(d, lanes_in), narrow);
        hn::Store(load<Dtype>(d, narrow), d, lanes_in);
        std::memcpy(values + i, lanes_in, n * sizeof(float));
    }
}

void ConvertToF32(int32_t dtype, const void* source, float* into, int64_t count) {
    const size_t n = static_cast<size_t>(count);
    if (dtype == NNPLUG_DTYPE_F16)
        convert_to<NNPLUG_DTYPE_F16>(static_cast<const uint16_t*>(source), into, n);
    else if (dtype == NNPLUG_DTYPE_BF16)
        convert_to<NNPLUG_DTYPE_BF16>(static_cast<const uint16_t*>(source), into, n);
    else
        std::memcpy(into, source, n * sizeof(float));
}

void ConvertFromF32(int32_t dtype, const float* source, void* into, int64_t count) {
    const size_t n = static_cast<size_t>(count);
    if (dtype == NNPLUG_DTYPE_F16)
        convert_from<NNPLUG_DTYPE_F16>(source, static_cast<uint16_t*>(into), n);
    else if (dtype == NNPLUG_DTYPE_BF16)
        convert_from<NNPLUG_DTYPE_BF16>(source, static_cast<uint16_t*>(into), n);
    else
        std::memcpy(into, source, n * sizeof(float));
}

void RoundToDtype(int32_t dtype, float* values, int64_t count) {
    const size_t n = static_cast<size_t>(count);
    if (dtype == NNPLUG_DTYPE_F16)
        round_through<NNPLUG_DTYPE_F16>(values, n);
    else if (dtype == NNPLUG_DTYPE_BF16)
        round_through<NNPLUG_DTYPE_BF16>(values, n);
}

const char* TargetName() {
    return hwy::TargetName(HWY_TARGET);
}

}  // namespace nnplug::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace nnplug::simd {

HWY_EXPORT(ConvertToF32);
HWY_EXPORT(ConvertFromF32);
HWY_EXPORT(RoundToDtype);
HWY_EXPORT(TargetName);

void convert_to_f32(int32_t dtype, const void* source, float* into, int64_t count) {
    HWY_DYNAMIC_DISPATCH(ConvertToF32)(dtype, source, into, count);
}
void convert_from_f32(int32_t dtype, const float* source, void* into, int64_t count) {
    HWY_DYNAMIC_DISPATCH(ConvertFromF32)(dtype, source, into, count);
}
void round_to_dtype(int32_t dtype, float* values, int64_t count) {
    HWY_DYNAMIC_DISPATCH(RoundToDtype)(dtype, values, count);
}
const char* target_name() {
    return HWY_DYNAMIC_DISPATCH(TargetName)();
}

}  // namespace nnplug::simd
#endif
