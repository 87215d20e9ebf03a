// float32 vectors loaded from and stored to float32, float16 and bfloat16 memory,
// with round to nearest even, in Highway. Include it from a file compiled once per
// target (foreach_target.h); the guard lets it be included again for each target.
#if defined(NNPLUG_VECTOR_DTYPE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NNPLUG_VECTOR_DTYPE_INL_H_
#undef NNPLUG_VECTOR_DTYPE_INL_H_
#else
#define NNPLUG_VECTOR_DTYPE_INL_H_
#endif

#include <hwy/highway.h>
#include <nnplug/dtype_convert.h>

#include <cstdint>
#include <type_traits>

// F16C converts float16 in hardware with round to nearest even; Highway's emulation
// on older targets truncates, so those targets convert lane by lane instead.
#undef NNPLUG_VECTOR_F16
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2 && !defined(HWY_DISABLE_F16C)
#define NNPLUG_VECTOR_F16 1
#else
#define NNPLUG_VECTOR_F16 0
#endif
// Non-temporal stores of 16-bit outputs need a full vector of them (AVX2 and up):
// on narrower targets a half vector would be streamed as a whole one.
#undef NNPLUG_STREAM_16BIT
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
#define NNPLUG_STREAM_16BIT 1
#else
#define NNPLUG_STREAM_16BIT 0
#endif

HWY_BEFORE_NAMESPACE();
namespace nnplug::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;
constexpr size_t kMaxLanes = HWY_MAX_BYTES / sizeof(float);

// The element type in memory of an nnplug_dtype.
template <int32_t Dtype>
using Raw = std::conditional_t<Dtype == NNPLUG_DTYPE_F32, float, uint16_t>;

template <int32_t Dtype>
HWY_INLINE VF load(DF d, const Raw<Dtype>* p) {
    if constexpr (Dtype == NNPLUG_DTYPE_F32) {
        return hn::LoadU(d, p);
    } else if constexpr (Dtype == NNPLUG_DTYPE_BF16) {
        const hn::RebindToUnsigned<DF> du32;
        const hn::Rebind<uint16_t, DF> du16;
        return hn::BitCast(d, hn::ShiftLeft<16>(hn::PromoteTo(du32, hn::LoadU(du16, p))));
    } else {
#if NNPLUG_VECTOR_F16
        const hn::Rebind<hwy::float16_t, DF> dh;
        return hn::PromoteTo(d, hn::LoadU(dh, reinterpret_cast<const hwy::float16_t*>(p)));
#else
        HWY_ALIGN float lanes[kMaxLanes];
        for (size_t j = 0; j < hn::Lanes(d); ++j) lanes[j] = f16_to_f32(p[j]);
        return hn::Load(d, lanes);
#endif
    }
}

template <int32_t Dtype>
HWY_INLINE float load_one(const Raw<Dtype>* p) {
    return load_as_f32(p, Dtype, 0);
}

// Round to nearest even with integer ops (Highway's DemoteTo to bfloat16 truncates);
// NaN stays a quiet NaN.
HWY_INLINE hn::Vec<hn::Rebind<uint16_t, DF>> to_bf16_bits(VF v) {
    const hn::RebindToUnsigned<DF> du32;
    const hn::RebindToSigned<DF> di32;
    const hn::Rebind<uint16_t, DF> du16;
    const auto bits = hn::BitCast(du32, v);
    const auto high = hn::ShiftRight<16>(bits);
    const auto lsb = hn::And(high, hn::Set(du32, 1u));
    auto rounded = hn::ShiftRight<16>(hn::Add(bits, hn::Add(hn::Set(du32, 0x7fffu), lsb)));
    const auto quiet_nan = hn::Or(high, hn::Set(du32, 0x40u));
    rounded = hn::IfThenElse(hn::RebindMask(du32, hn::IsNaN(v)), quiet_nan, rounded);
    return hn::DemoteTo(du16, hn::BitCast(di32, rounded));  // every value fits 16 bits
}

template <int32_t Dtype, bool Stream>
HWY_INLINE void store(DF d, VF v, Raw<Dtype>* p) {
    if constexpr (Dtype == NNPLUG_DTYPE_F32) {
        if constexpr (Stream)
            hn::Stream(v, d, p);
        else
            hn::StoreU(v, d, p);
    } else if constexpr (Dtype == NNPLUG_DTYPE_BF16) {
        const hn::Rebind<uint16_t, DF> du16;
        if constexpr (Stream)
            hn::Stream(to_bf16_bits(v), du16, p);
        else
            hn::StoreU(to_bf16_bits(v), du16, p);
    } else {
#if NNPLUG_VECTOR_F16
        const hn::Rebind<hwy::float16_t, DF> dh;
        auto* into = reinterpret_cast<hwy::float16_t*>(p);
        if constexpr (Stream)
            hn::Stream(hn::DemoteTo(dh, v), dh, into);
        else
            hn::StoreU(hn::DemoteTo(dh, v), dh, into);
#else
        HWY_ALIGN float lanes[kMaxLanes];
        hn::Store(v, d, lanes);
        for (size_t j = 0; j < hn::Lanes(d); ++j) p[j] = f32_to_f16(lanes[j]);
#endif
    }
}

// Whether full vectors of Dtype can be stored non-temporally on this target.
template <int32_t Dtype>
constexpr bool can_stream() {
    if constexpr (Dtype == NNPLUG_DTYPE_F32)
        return true;
    else if constexpr (Dtype == NNPLUG_DTYPE_BF16)
        return NNPLUG_STREAM_16BIT != 0;
    else
        return NNPLUG_STREAM_16BIT != 0 && NNPLUG_VECTOR_F16 != 0;
}

}  // namespace nnplug::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard
