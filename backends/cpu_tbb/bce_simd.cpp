// Highway kernels: this file is compiled once per target instruction set
// (foreach_target.h) and the entry points at the bottom dispatch at run time.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "bce_simd.cpp"
#include <hwy/foreach_target.h>  // must come before highway.h

#include <hwy/cache_control.h>
#include <hwy/highway.h>
#include <nnplug/bce_math.h>
#include <nnplug/dtype_convert.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

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

// The IEEE special cases of logf and log1pf on the logs below: log(+-0) = -inf,
// log(< 0) = NaN, log(inf) = inf, NaN stays NaN. `argument` is what the log is taken of.
HWY_INLINE VF ieee_special_cases(DF d, VF argument, VF x, VF r) {
    const VF zero = hn::Zero(d);
    const VF infinity = hn::Set(d, std::numeric_limits<float>::infinity());
    r = hn::IfThenElse(hn::Eq(argument, zero), hn::Neg(infinity), r);
    r = hn::IfThenElse(hn::Lt(argument, zero), hn::Set(d, std::numeric_limits<float>::quiet_NaN()), r);
    r = hn::IfThenElse(hn::Eq(argument, infinity), infinity, r);
    return hn::IfThenElse(hn::IsNaN(x), x, r);  // Ne(x, x) is an ordered compare on AVX-512
}

constexpr float kMinNormal = 1.17549435e-38f;

// ln(x) without a division (Highway's Log divides once per call, which bounds the
// forward's throughput): x = 2^e * m with m in [sqrt(1/2), sqrt(2)), then the Cephes
// logf polynomial in f = m - 1. Within 2 ulp for normal and subnormal x.
template <bool kSubnormals = true>
HWY_INLINE VF log_core(DF d, VF x) {
    const hn::RebindToSigned<DF> di;
    const auto is_subnormal = hn::Lt(x, hn::Set(d, kMinNormal));
    if (kSubnormals) x = hn::IfThenElse(is_subnormal, hn::Mul(x, hn::Set(d, 33554432.0f)), x);  // * 2^25
    const auto shifted = hn::Add(hn::BitCast(di, x), hn::Set(di, 0x3f800000 - 0x3f3504f3));
    const auto exponent_bits = hn::Sub(hn::ShiftRight<23>(shifted), hn::Set(di, 127));
    VF e = hn::ConvertTo(d, exponent_bits);
    if (kSubnormals) e = hn::IfThenElse(is_subnormal, hn::Sub(e, hn::Set(d, 25.0f)), e);
    const VF m = hn::BitCast(d, hn::Add(hn::And(shifted, hn::Set(di, 0x007fffff)), hn::Set(di, 0x3f3504f3)));
    const VF f = hn::Sub(m, hn::Set(d, 1.0f));
    const VF f2 = hn::Mul(f, f);
    VF p = hn::Set(d, 7.0376836292e-2f);
    p = hn::MulAdd(p, f, hn::Set(d, -1.1514610310e-1f));
    p = hn::MulAdd(p, f, hn::Set(d, 1.1676998740e-1f));
    p = hn::MulAdd(p, f, hn::Set(d, -1.2420140846e-1f));
    p = hn::MulAdd(p, f, hn::Set(d, 1.4249322787e-1f));
    p = hn::MulAdd(p, f, hn::Set(d, -1.6668057665e-1f));
    p = hn::MulAdd(p, f, hn::Set(d, 2.0000714765e-1f));
    p = hn::MulAdd(p, f, hn::Set(d, -2.4999993993e-1f));
    p = hn::MulAdd(p, f, hn::Set(d, 3.3333331174e-1f));
    VF y = hn::Mul(hn::Mul(p, f), f2);
    y = hn::MulAdd(e, hn::Set(d, -2.12194440e-4f), y);
    y = hn::NegMulAdd(f2, hn::Set(d, 0.5f), y);
    return hn::MulAdd(e, hn::Set(d, 0.693359375f), hn::Add(f, y));
}

HWY_INLINE VF log_ieee(DF d, VF x) { return ieee_special_cases(d, x, x, log_core(d, x)); }

// log1p(x) = ln(u) + c / u with u = 1 + x rounded and c = x - (u - 1) its rounding error
// (exact); c / u is taken as c * (2 - u): c is at most half an ulp of u, so that
// approximation only matters where it is far below float32 precision.
template <bool kSpecialCases = true>
HWY_INLINE VF log1p_of(DF d, VF x) {
    const VF one = hn::Set(d, 1.0f);
    const VF u = hn::Add(one, x);
    const VF c = hn::Sub(x, hn::Sub(u, one));
    const VF r = hn::MulAdd(c, hn::Sub(hn::Set(d, 2.0f), u), log_core<kSpecialCases>(d, u));
    return kSpecialCases ? ieee_special_cases(d, u, x, r) : r;
}

// Walks a run a vector at a time: compute(g, s, t, w) gives the result vector, sink
// takes it with its first index and how many lanes are real (fewer in the tail).
template <int32_t Dtype, Feed G, Feed W, class Compute, class Sink>
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

template <int32_t Dtype, class Compute, Feed G, Feed W>
HWY_INLINE void walk_into_out(const UniformRun& run, Compute&& compute) {
    using T = Raw<Dtype>;
    T* out = static_cast<T*>(run.out);
    const DF d;
    const bool aligned = reinterpret_cast<uintptr_t>(out) % (hn::Lanes(d) * sizeof(T)) == 0;
    if constexpr (can_stream<Dtype>()) {
        if (run.stream_out && aligned) {
            walk<Dtype, G, W>(run, compute, StoreSink<Dtype, true>{out});
            return;
        }
    }
    walk<Dtype, G, W>(run, compute, StoreSink<Dtype, false>{out});
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
    const VF one = hn::Set(d, 1.0f);
    const VF floor = hn::Set(d, kBceLogClamp);
    VF log_self, log_rest;  // ln(self) and ln(1 - self), the latter as log1p(-self) like bce_forward
    if (HWY_LIKELY(hn::AllTrue(d, hn::And(hn::Ge(s, hn::Set(d, kMinNormal)), hn::Lt(s, one))))) {
        // Normal self in (0, 1): no special case, both logs are above -88, no clamp.
        log_self = log_core<false>(d, s);
        log_rest = log1p_of<false>(d, hn::Neg(s));
    } else {
        log_self = clamp_below(log_ieee(d, s), floor);
        log_rest = clamp_below(log1p_of<true>(d, hn::Neg(s)), floor);
    }
    const VF sum = hn::Add(hn::Mul(t, log_self), hn::Mul(hn::Sub(one, t), log_rest));
    return W == Feed::kAbsent ? hn::Neg(sum) : hn::Mul(hn::Neg(w), sum);
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
        walk_into_out<decltype(dtype)::value, decltype(compute)&, Feed::kAbsent, kWeight>(run, compute);
    });
}

double ForwardRunSum(const UniformRun& run) {
    double total = 0;
    by_dtype_and_weight(run, [&](auto dtype, auto weight) {
        constexpr Feed kWeight = decltype(weight)::value;
        const DF d;
        const auto compute = [&](VF, VF s, VF t, VF w) { return forward_vector<kWeight>(d, s, t, w); };
#if HWY_TARGET == HWY_SCALAR
        walk<decltype(dtype)::value, Feed::kAbsent, kWeight>(
            run, compute, [&](VF v, size_t, size_t) { total += static_cast<double>(hn::GetLane(v)); });
#else
        // Two double accumulators per float vector: the order depends only on the run.
        const hn::Repartition<double, DF> dd;
        const hn::Half<DF> dh;
        auto low = hn::Zero(dd), high = hn::Zero(dd);
        walk<decltype(dtype)::value, Feed::kAbsent, kWeight>(run, compute, [&](VF v, size_t, size_t count) {
            if (count != hn::Lanes(d)) v = hn::IfThenElseZero(hn::FirstN(d, count), v);
            low = hn::Add(low, hn::PromoteTo(dd, hn::LowerHalf(dh, v)));
            high = hn::Add(high, hn::PromoteTo(dd, hn::UpperHalf(dh, v)));
        });
        total = hn::GetLane(hn::SumOfLanes(dd, hn::Add(low, high)));
#endif
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
