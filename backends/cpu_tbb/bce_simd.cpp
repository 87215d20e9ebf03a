// Highway kernels: this file is compiled once per target instruction set
// (foreach_target.h) and the entry points at the bottom dispatch at run time.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "bce_simd.cpp"
#include <hwy/foreach_target.h>  // must come before highway.h

#include <hwy/cache_control.h>
#include <hwy/highway.h>
#include <nnplug/ops/bce_math.h>
#include <nnplug/dtype_convert.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "bce_forward-inl.h"
#include "bce_simd.h"

HWY_BEFORE_NAMESPACE();
namespace nnplug::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;
constexpr size_t kMaxLanes = HWY_MAX_BYTES / sizeof(float);

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
HWY_INLINE hn::Vec<hn::Rebind<uint16_t, DF>> to_bf16_bits(DF d, VF v) {
    const hn::RebindToUnsigned<DF> du32;
    const hn::RebindToSigned<DF> di32;
    const hn::Rebind<uint16_t, DF> du16;
    const auto bits = hn::BitCast(du32, v);
    const auto high = hn::ShiftRight<16>(bits);
    const auto lsb = hn::And(high, hn::Set(du32, 1u));
    auto rounded = hn::ShiftRight<16>(hn::Add(bits, hn::Add(hn::Set(du32, 0x7fffu), lsb)));
    const auto quiet_nan = hn::Or(high, hn::Set(du32, 0x40u));
    rounded = hn::IfThenElse(hn::RebindMask(du32, hn::IsNaN(v)), quiet_nan, rounded);
    (void)d;
    return hn::DemoteTo(du16, hn::BitCast(di32, rounded));  // every value fits 16 bits
}

template <int32_t Dtype, bool Stream>
HWY_INLINE void store(DF d, VF v, Raw<Dtype>* p) {
    if constexpr (Dtype == NNPLUG_DTYPE_F32) {
        if constexpr (Stream) hn::Stream(v, d, p);
        else hn::StoreU(v, d, p);
    } else if constexpr (Dtype == NNPLUG_DTYPE_BF16) {
        const hn::Rebind<uint16_t, DF> du16;
        if constexpr (Stream) hn::Stream(to_bf16_bits(d, v), du16, p);
        else hn::StoreU(to_bf16_bits(d, v), du16, p);
    } else {
#if NNPLUG_VECTOR_F16
        const hn::Rebind<hwy::float16_t, DF> dh;
        auto* into = reinterpret_cast<hwy::float16_t*>(p);
        if constexpr (Stream) hn::Stream(hn::DemoteTo(dh, v), dh, into);
        else hn::StoreU(hn::DemoteTo(dh, v), dh, into);
#else
        HWY_ALIGN float lanes[kMaxLanes];
        hn::Store(v, d, lanes);
        for (size_t j = 0; j < hn::Lanes(d); ++j) p[j] = f32_to_f16(lanes[j]);
#endif
    }
}

template <int32_t Dtype>
constexpr bool can_stream() {
    if constexpr (Dtype == NNPLUG_DTYPE_F32) return true;
    else if constexpr (Dtype == NNPLUG_DTYPE_BF16) return NNPLUG_STREAM_16BIT != 0;
    else return NNPLUG_STREAM_16BIT != 0 && NNPLUG_VECTOR_F16 != 0;
}

// clamp_below(x, floor) with NaN passing through (Max may return either operand for NaN).
HWY_INLINE VF clamp_below(VF x, VF floor) { return hn::IfThenElse(hn::Lt(x, floor), floor, x); }

// The forward computes long enough per vector that the hardware prefetcher falls
// behind on large inputs: its loops ask for the data 1 KiB ahead (prefetches never fault).
constexpr size_t kPrefetchBytes = 1024;
template <class T>
HWY_INLINE void prefetch_ahead(const T* p) {
    hwy::Prefetch(reinterpret_cast<const char*>(p) + kPrefetchBytes);
}

// Walks a run a vector at a time: compute(g, s, t, w) gives the result vector, sink
// takes it with its first index and how many lanes are real (fewer in the tail).
template <int32_t Dtype, Feed G, Feed W, bool kPrefetch = false, class Compute, class Sink>
HWY_INLINE void walk(const UniformRun& run, Compute&& compute, Sink&& sink) {
    using T = Raw<Dtype>;
    const DF d;
    const size_t lanes = hn::Lanes(d);
    const size_t n = static_cast<size_t>(run.length);
    const T* g = static_cast<const T*>(run.grad);
    const T* s = static_cast<const T*>(run.self);
    const T* t = static_cast<const T*>(run.target);
    const T* w = static_cast<const T*>(run.weight);
    const VF g_splat = G == Feed::kSplat ? hn::Set(d, load_one<Dtype>(g)) : hn::Zero(d);
    const VF w_splat = W == Feed::kSplat ? hn::Set(d, load_one<Dtype>(w)) : hn::Zero(d);
    const auto feed = [&](auto mode, const T* base, size_t i, VF splat) {
        if constexpr (decltype(mode)::value == Feed::kContiguous) return load<Dtype>(d, base + i);
        else return splat;
    };
    using GradMode = std::integral_constant<Feed, G>;
    using WeightMode = std::integral_constant<Feed, W>;
    size_t i = 0;
    for (; i + lanes <= n; i += lanes) {
        if constexpr (kPrefetch) {
            prefetch_ahead(s + i);
            prefetch_ahead(t + i);
            if constexpr (W == Feed::kContiguous) prefetch_ahead(w + i);
        }
        sink(compute(feed(GradMode{}, g, i, g_splat), load<Dtype>(d, s + i), load<Dtype>(d, t + i),
                     feed(WeightMode{}, w, i, w_splat)),
             i, lanes);
    }
    if (i == n) return;
    // The tail: copy the last elements into zeroed vectors, so no load passes the end.
    const size_t rest = n - i;
    HWY_ALIGN T gt[kMaxLanes] = {}, st[kMaxLanes] = {}, tt[kMaxLanes] = {}, wt[kMaxLanes] = {};
    std::memcpy(st, s + i, rest * sizeof(T));
    std::memcpy(tt, t + i, rest * sizeof(T));
    if (G == Feed::kContiguous) std::memcpy(gt, g + i, rest * sizeof(T));
    if (W == Feed::kContiguous) std::memcpy(wt, w + i, rest * sizeof(T));
    sink(compute(feed(GradMode{}, gt, 0, g_splat), load<Dtype>(d, st), load<Dtype>(d, tt),
                 feed(WeightMode{}, wt, 0, w_splat)),
         i, rest);
}

// A sink writing the result to out; full vectors streamed when asked.
template <int32_t Dtype, bool Stream>
struct StoreSink {
    Raw<Dtype>* out;
    HWY_INLINE void operator()(VF v, size_t i, size_t count) const {
        const DF d;
        if (count == hn::Lanes(d)) {
            store<Dtype, Stream>(d, v, out + i);
            return;
        }
        HWY_ALIGN Raw<Dtype> lanes[kMaxLanes];
        store<Dtype, false>(d, v, lanes);
        std::memcpy(out + i, lanes, count * sizeof(Raw<Dtype>));
    }
};

template <int32_t Dtype, class Compute, Feed G, Feed W, bool kPrefetch = false>
HWY_INLINE void walk_into_out(const UniformRun& run, Compute&& compute) {
    using T = Raw<Dtype>;
    T* out = static_cast<T*>(run.out);
    const DF d;
    const bool aligned = reinterpret_cast<uintptr_t>(out) % (hn::Lanes(d) * sizeof(T)) == 0;
    if constexpr (can_stream<Dtype>()) {
        if (run.stream_out && aligned) {
            walk<Dtype, G, W, kPrefetch>(run, compute, StoreSink<Dtype, true>{out});
            return;
        }
    }
    walk<Dtype, G, W, kPrefetch>(run, compute, StoreSink<Dtype, false>{out});
}

template <Feed W>
HWY_INLINE VF backward_vector(DF d, VF g, VF s, VF t, VF w, VF scale) {
    // The canonical order of nnplug::bce_backward, with explicit Mul/Sub/Div (never MulAdd).
    const VF numerator = hn::Mul(W == Feed::kAbsent ? g : hn::Mul(g, w), hn::Sub(s, t));
    const VF denominator = clamp_below(hn::Mul(s, hn::Sub(hn::Set(d, 1.0f), s)), hn::Set(d, kBceEpsilon));
    return hn::Mul(hn::Div(numerator, denominator), scale);
}

template <Feed W>
HWY_INLINE VF forward_vector(DF d, VF s, VF t, VF w) {
    return simd::HWY_NAMESPACE::forward_loss<W != Feed::kAbsent>(d, s, t, w);
}

// Calls body(dtype constant, weight-feed constant) for the run's dtype and weight feed.
template <class Body>
HWY_INLINE void by_dtype_and_weight(const UniformRun& run, Body&& body) {
    const auto with_weight = [&](auto dtype) {
        switch (run.weight_feed) {
        case Feed::kAbsent: return body(dtype, std::integral_constant<Feed, Feed::kAbsent>{});
        case Feed::kSplat: return body(dtype, std::integral_constant<Feed, Feed::kSplat>{});
        case Feed::kContiguous: return body(dtype, std::integral_constant<Feed, Feed::kContiguous>{});
        }
    };
    switch (run.dtype) {
    case NNPLUG_DTYPE_F16: return with_weight(std::integral_constant<int32_t, NNPLUG_DTYPE_F16>{});
    case NNPLUG_DTYPE_BF16: return with_weight(std::integral_constant<int32_t, NNPLUG_DTYPE_BF16>{});
    default: return with_weight(std::integral_constant<int32_t, NNPLUG_DTYPE_F32>{});
    }
}

void BackwardRun(const UniformRun& run, float scale_value) {
    by_dtype_and_weight(run, [&](auto dtype, auto weight) {
        constexpr int32_t kDtype = decltype(dtype)::value;
        constexpr Feed kWeight = decltype(weight)::value;
        const DF d;
        const VF scale = hn::Set(d, scale_value);
        const auto compute = [&](VF g, VF s, VF t, VF w) { return backward_vector<kWeight>(d, g, s, t, w, scale); };
        if (run.grad_feed == Feed::kSplat)
            walk_into_out<kDtype, decltype(compute)&, Feed::kSplat, kWeight>(run, compute);
        else
            walk_into_out<kDtype, decltype(compute)&, Feed::kContiguous, kWeight>(run, compute);
    });
}

void ForwardRun(const UniformRun& run) {
    by_dtype_and_weight(run, [&](auto dtype, auto weight) {
        constexpr Feed kWeight = decltype(weight)::value;
        const DF d;
        const auto compute = [&](VF, VF s, VF t, VF w) { return forward_vector<kWeight>(d, s, t, w); };
        walk_into_out<decltype(dtype)::value, decltype(compute)&, Feed::kAbsent, kWeight, true>(run, compute);
    });
}

// The forward loss at element i of contiguous operands, with kPrefetch the data 1 KiB
// ahead prefetched.
template <int32_t Dtype, Feed W, bool kPrefetch = true>
HWY_INLINE VF forward_vector_at(DF d, const Raw<Dtype>* s, const Raw<Dtype>* t, const Raw<Dtype>* w, VF w_splat,
                                size_t i) {
    VF weight = w_splat;
    if constexpr (W == Feed::kContiguous) {
        if constexpr (kPrefetch) prefetch_ahead(w + i);
        weight = load<Dtype>(d, w + i);
    }
    if constexpr (kPrefetch) {
        prefetch_ahead(s + i);
        prefetch_ahead(t + i);
    }
    return forward_vector<W>(d, load<Dtype>(d, s + i), load<Dtype>(d, t + i), weight);
}

#if HWY_TARGET != HWY_SCALAR
// Float vectors summed in two double accumulators (the low and the high half).
struct DoubleSums {
    using DD = hn::Repartition<double, DF>;
    hn::Vec<DD> low, high;
    HWY_INLINE DoubleSums() : low(hn::Zero(DD())), high(hn::Zero(DD())) {}
    HWY_INLINE void add(VF v) {
        const hn::Half<DF> dh;
        low = hn::Add(low, hn::PromoteTo(DD(), hn::LowerHalf(dh, v)));
        high = hn::Add(high, hn::PromoteTo(DD(), hn::UpperHalf(dh, v)));
    }
    HWY_INLINE double total() const { return hn::GetLane(hn::SumOfLanes(DD(), hn::Add(low, high))); }
};
#endif

// The forward loss of a run summed in double lanes, in an order fixed by the run alone.
// Its own loop rather than walk with a summing sink, so the accumulators stay in
// registers; two vectors per step, added in float32 (one rounding per pair of
// elements) before they are widened, which halves the conversions.
template <int32_t Dtype, Feed W>
HWY_INLINE double forward_sum(const UniformRun& run) {
    using T = Raw<Dtype>;
    const DF d;
    const size_t lanes = hn::Lanes(d);
    const size_t n = static_cast<size_t>(run.length);
    const T* s = static_cast<const T*>(run.self);
    const T* t = static_cast<const T*>(run.target);
    const T* w = static_cast<const T*>(run.weight);
    const VF w_splat = W == Feed::kSplat ? hn::Set(d, load_one<Dtype>(w)) : hn::Zero(d);
    const size_t full = n / lanes * lanes;
#if HWY_TARGET == HWY_SCALAR
    double total = 0;
    for (size_t i = 0; i < full; ++i)
        total += static_cast<double>(hn::GetLane(forward_vector_at<Dtype, W>(d, s, t, w, w_splat, i)));
    return total;
#else
    DoubleSums sums;
    size_t i = 0;
    for (; i + 2 * lanes <= full; i += 2 * lanes) {
        const VF first = forward_vector_at<Dtype, W>(d, s, t, w, w_splat, i);
        sums.add(hn::Add(first, forward_vector_at<Dtype, W>(d, s, t, w, w_splat, i + lanes)));
    }
    if (i < full) sums.add(forward_vector_at<Dtype, W>(d, s, t, w, w_splat, i));
    if (const size_t rest = n - full; rest != 0) {
        // The tail: the last elements copied into zeroed vectors, so no load passes the end.
        HWY_ALIGN T st[kMaxLanes] = {}, tt[kMaxLanes] = {}, wt[kMaxLanes] = {};
        std::memcpy(st, s + full, rest * sizeof(T));
        std::memcpy(tt, t + full, rest * sizeof(T));
        if (W == Feed::kContiguous) std::memcpy(wt, w + full, rest * sizeof(T));
        sums.add(hn::IfThenElseZero(hn::FirstN(d, rest), forward_vector_at<Dtype, W, false>(d, st, tt, wt, w_splat, 0)));
    }
    return sums.total();
#endif
}

double ForwardRunSum(const UniformRun& run) {
    double total = 0;
    by_dtype_and_weight(run, [&](auto dtype, auto weight) {
        total = forward_sum<decltype(dtype)::value, decltype(weight)::value>(run);
    });
    return total;
}

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

void ConvertToF32(int32_t dtype, const void* source, float* into, int64_t count) {
    const size_t n = static_cast<size_t>(count);
    if (dtype == NNPLUG_DTYPE_F16) convert_to<NNPLUG_DTYPE_F16>(static_cast<const uint16_t*>(source), into, n);
    else if (dtype == NNPLUG_DTYPE_BF16) convert_to<NNPLUG_DTYPE_BF16>(static_cast<const uint16_t*>(source), into, n);
    else std::memcpy(into, source, n * sizeof(float));
}

void ConvertFromF32(int32_t dtype, const float* source, void* into, int64_t count) {
    const size_t n = static_cast<size_t>(count);
    if (dtype == NNPLUG_DTYPE_F16) convert_from<NNPLUG_DTYPE_F16>(source, static_cast<uint16_t*>(into), n);
    else if (dtype == NNPLUG_DTYPE_BF16) convert_from<NNPLUG_DTYPE_BF16>(source, static_cast<uint16_t*>(into), n);
    else std::memcpy(into, source, n * sizeof(float));
}

void FinishStreaming() { hwy::FlushStream(); }

const char* TargetName() { return hwy::TargetName(HWY_TARGET); }

}  // namespace nnplug::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace nnplug::cpu {

HWY_EXPORT(BackwardRun);
HWY_EXPORT(ForwardRun);
HWY_EXPORT(ForwardRunSum);
HWY_EXPORT(ConvertToF32);
HWY_EXPORT(ConvertFromF32);
HWY_EXPORT(FinishStreaming);
HWY_EXPORT(TargetName);

void backward_run(const UniformRun& run, float scale) { HWY_DYNAMIC_DISPATCH(BackwardRun)(run, scale); }
void forward_run(const UniformRun& run) { HWY_DYNAMIC_DISPATCH(ForwardRun)(run); }
double forward_run_sum(const UniformRun& run) { return HWY_DYNAMIC_DISPATCH(ForwardRunSum)(run); }
void convert_to_f32(int32_t dtype, const void* source, float* into, int64_t count) {
    HWY_DYNAMIC_DISPATCH(ConvertToF32)(dtype, source, into, count);
}
void convert_from_f32(int32_t dtype, const float* source, void* into, int64_t count) {
    HWY_DYNAMIC_DISPATCH(ConvertFromF32)(dtype, source, into, count);
}
void finish_streaming() { HWY_DYNAMIC_DISPATCH(FinishStreaming)(); }
const char* simd_target_name() { return HWY_DYNAMIC_DISPATCH(TargetName)(); }

}  // namespace nnplug::cpu
#endif
