// The binary cross-entropy forward loss in Highway vectors, shared by the backends.
// Include it from a file compiled once per target (foreach_target.h): the guard below
// lets it be included again for each target, as Highway's -inl.h headers are.
//
// ln(x) takes x = 2^k * z with z in [0.699, 1.398), splits that range in 16 parts by
// the top mantissa bits, and per part looks up c (1/c and ln(c) from a table) so that
// r = z / c - 1 is within 0.031: ln(x) = k ln(2) + ln(c) + log1p(r), with a degree-4
// polynomial for log1p(r). The part holding 1.0 has c = 1, so ln(x) near 1 keeps its
// relative accuracy. Within 1.8 float32 ulp over (0, 1) on every target; both logs take
// 12 multiplies or multiply-adds where a degree-9 polynomial without a table takes 28.
#if defined(NNPLUG_BINARY_CROSS_ENTROPY_FORWARD_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NNPLUG_BINARY_CROSS_ENTROPY_FORWARD_INL_H_
#undef NNPLUG_BINARY_CROSS_ENTROPY_FORWARD_INL_H_
#else
#define NNPLUG_BINARY_CROSS_ENTROPY_FORWARD_INL_H_
#endif

#include <hwy/highway.h>
#include <nnplug/ops/binary_cross_entropy_math.h>

#include <cstdint>
#include <limits>

HWY_BEFORE_NAMESPACE();
namespace nnplug::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_NATIVE_FMA
// With FMA, r = z * (1/c) - 1 rounds once: the table holds 1/c, chosen so that
// ln(c) = -ln(1/c) is within 2^-35 relative of its float32 (fitted with numpy).
alignas(64) static constexpr float kInverseC[16] = {
    0x1.662f3ap+0f, 0x1.573932p+0f, 0x1.497e8cp+0f, 0x1.3caa32p+0f, 0x1.30db8ap+0f, 0x1.26182ap+0f,
    0x1.1be1fcp+0f, 0x1.12461ap+0f, 0x1.097ae6p+0f, 0x1p+0f,        0x1.e5ef5ap-1f, 0x1.cab000p-1f,
    0x1.b26f42p-1f, 0x1.9c67c0p-1f, 0x1.88c780p-1f, 0x1.76b678p-1f};
alignas(64) static constexpr float kLogC[16] = {
    -0x1.57ee7ep-2f, -0x1.2c3db6p-2f, -0x1.027058p-2f, -0x1.b38a76p-3f, -0x1.65b7f2p-3f,
    -0x1.1c1afap-3f, -0x1.a775d6p-4f, -0x1.1a6adap-4f, -0x1.29e158p-5f, 0.0f,
    0x1.ac07d2p-5f,  0x1.c260acp-4f,  0x1.50719ep-3f,  0x1.bb04fap-3f,  0x1.0f7048p-2f,
    0x1.3fa824p-2f};
#else
// Without FMA, r = (z - c) * (1/c): z - c is exact (z is within a factor 2 of c), the
// product rounds once. c is chosen so that ln(c) is within 2^-35 relative of its float32.
alignas(64) static constexpr float kC[16] = {0x1.6db3eep-1f, 0x1.7deb4ap-1f, 0x1.8ddedp-1f,  0x1.9ddb48p-1f,
                                             0x1.adefc6p-1f, 0x1.bdd986p-1f, 0x1.cdf28p-1f,  0x1.ddf9f8p-1f,
                                             0x1.edc542p-1f, 0x1p+0f,        0x1.0da7e2p+0f, 0x1.1dd1dp+0f,
                                             0x1.2dba36p+0f, 0x1.3daf7ep+0f, 0x1.4ddc6ep+0f, 0x1.5dda0ep+0f};
alignas(64) static constexpr float kInverseC[16] = {
    0x1.666944p+0f, 0x1.57317p+0f,  0x1.496f16p+0f, 0x1.3cb572p+0f, 0x1.30dd12p+0f, 0x1.25fb84p+0f,
    0x1.1bbceep+0f, 0x1.123904p+0f, 0x1.097384p+0f, 0x1p+0f,        0x1.e6124ep-1f, 0x1.ca954p-1f,
    0x1.b267c6p-1f, 0x1.9c958ap-1f, 0x1.88982ep-1f, 0x1.76a66cp-1f};
alignas(64) static constexpr float kLogC[16] = {
    -0x1.58946p-2f,  -0x1.2c268ep-2f, -0x1.02404cp-2f, -0x1.b3d332p-3f, -0x1.65c236p-3f,
    -0x1.1b536ep-3f, -0x1.a55f16p-4f, -0x1.19a76cp-4f, -0x1.28fd8cp-5f, 0.0f,
    0x1.a9ba98p-5f,  0x1.c34f98p-4f,  0x1.5094e2p-3f,  0x1.ba21a8p-3f,  0x1.0febacp-2f,
    0x1.3fd3fep-2f};
#endif
// z = x / 2^k starts at the float with these bits (0.69921875).
constexpr int32_t kPartsStart = 0x3f330000;
constexpr float kMinNormal = 1.17549435e-38f;

// table[index] per lane, index in [0, 16).
template <class D>
HWY_INLINE hn::Vec<D> lookup16(D d, const float* table, hn::Vec<hn::RebindToSigned<D>> index) {
    constexpr size_t kMax = hn::MaxLanes(D());
    if constexpr (kMax >= 16) {
        return hn::TableLookupLanes(hn::LoadU(d, table), hn::IndicesFromVec(d, index));
    } else if constexpr (kMax == 8) {
        // Two 8-lane permutes and a select on bit 3 (one permute instruction each on AVX2).
        const hn::RebindToSigned<D> di;
        const auto low_index = hn::IndicesFromVec(d, hn::And(index, hn::Set(di, 7)));
        const auto upper = hn::RebindMask(d, hn::Ne(hn::And(index, hn::Set(di, 8)), hn::Zero(di)));
        return hn::IfThenElse(upper, hn::TableLookupLanes(hn::LoadU(d, table + 8), low_index),
                              hn::TableLookupLanes(hn::LoadU(d, table), low_index));
    } else {
        return hn::GatherIndex(d, table, index);
    }
}

// ln(x) for positive normal finite x (other x: see log_any). With kBiased, exponent_bias
// is subtracted from k (log_any scales subnormal x by 2^25 first).
template <bool kBiased = false, class D>
HWY_INLINE hn::Vec<D> log_normal(D d, hn::Vec<D> x, hn::Vec<D> exponent_bias = hn::Zero(D())) {
    const hn::RebindToSigned<D> di;
    const auto bits = hn::BitCast(di, x);
    const auto from_start = hn::Sub(bits, hn::Set(di, kPartsStart));
    const auto index = hn::And(hn::ShiftRight<19>(from_start), hn::Set(di, 15));
    const auto k = hn::ShiftRight<23>(from_start);  // arithmetic: x below the start has k < 0
    const hn::RebindToUnsigned<D> du;               // shift k's bits back in unsigned: no signed overflow
    const auto z = hn::BitCast(d, hn::Sub(hn::BitCast(du, bits), hn::ShiftLeft<23>(hn::BitCast(du, k))));
#if HWY_NATIVE_FMA
    const auto r = hn::MulSub(z, lookup16(d, kInverseC, index), hn::Set(d, 1.0f));
#else
    const auto r = hn::Mul(hn::Sub(z, lookup16(d, kC, index)), lookup16(d, kInverseC, index));
#endif
    const auto r2 = hn::Mul(r, r);
    // log1p(r) = r + r^2 (a2 + a3 r + a4 r^2), minimax in relative error over |r| < 0.031: 2.7e-8.
    auto q = hn::MulAdd(hn::Set(d, -0x1.feb0d4p-3f), r, hn::Set(d, 0x1.557b42p-2f));
    q = hn::MulAdd(q, r, hn::Set(d, -0x1.000008p-1f));
    auto exponent = hn::ConvertTo(d, k);
    if constexpr (kBiased) exponent = hn::Sub(exponent, exponent_bias);
    const auto high = hn::MulAdd(exponent, hn::Set(d, 0x1.62e430p-1f), lookup16(d, kLogC, index));
    return hn::Add(high, hn::MulAdd(q, r2, r));
}

// clamp_below(x, floor) with NaN passing through (Max may return either operand for NaN).
template <class V>
HWY_INLINE V clamp_below(V x, V floor) {
    return hn::IfThenElse(hn::Lt(x, floor), floor, x);
}

// The IEEE special cases of logf and log1pf: log(+-0) = -inf, log(< 0) = NaN,
// log(inf) = inf, NaN stays NaN. `argument` is what the log is taken of, x the input.
template <class D>
HWY_INLINE hn::Vec<D> ieee_special_cases(D d, hn::Vec<D> argument, hn::Vec<D> x, hn::Vec<D> r) {
    const auto zero = hn::Zero(d);
    const auto infinity = hn::Set(d, std::numeric_limits<float>::infinity());
    r = hn::IfThenElse(hn::Eq(argument, zero), hn::Neg(infinity), r);
    r = hn::IfThenElse(hn::Lt(argument, zero), hn::Set(d, std::numeric_limits<float>::quiet_NaN()), r);
    r = hn::IfThenElse(hn::Eq(argument, infinity), infinity, r);
    return hn::IfThenElse(hn::IsNaN(x), x, r);
}

// ln(x) for every x, subnormals scaled by 2^25 first.
template <class D>
HWY_INLINE hn::Vec<D> log_any(D d, hn::Vec<D> x) {
    const auto subnormal = hn::Lt(x, hn::Set(d, kMinNormal));
    const auto scaled = hn::IfThenElse(subnormal, hn::Mul(x, hn::Set(d, 33554432.0f)), x);
    const auto bias = hn::IfThenElseZero(subnormal, hn::Set(d, 25.0f));
    return ieee_special_cases(d, x, x, log_normal<true>(d, scaled, bias));
}

// log1p(-s) = ln(u) + c / u with u = 1 - s rounded and c = (1 - u) - s its exact rounding
// error; c / u is taken as c * (2 - u): c is nonzero only for s < 0.5, where u is in
// (0.5, 1] and that product is within (1 - u)^2 |c| < 2^-27 of it.
// kAnyInput takes every u (log_any), else u must be positive and normal (log_normal).
template <bool kAnyInput, class D>
HWY_INLINE hn::Vec<D> log_one_minus(D d, hn::Vec<D> s) {
    const auto one = hn::Set(d, 1.0f);
    const auto u = hn::Sub(one, s);
    const auto c = hn::Sub(hn::Sub(one, u), s);
    const auto log_u = kAnyInput ? log_any(d, u) : log_normal(d, u);
    return hn::MulAdd(c, hn::Sub(hn::Set(d, 2.0f), u), log_u);
}

// -(t ln(s) + (1 - t) ln(1 - s)) per lane, the logs clamped at -100 (NaN passes), times
// w when kWeighted. Lanes whose s is a normal number in (0, 1) take the short path:
// both logs are above -88 and no special case applies.
template <bool kWeighted, class D>
HWY_INLINE hn::Vec<D> forward_loss(D d, hn::Vec<D> s, hn::Vec<D> t, hn::Vec<D> w) {
    const hn::RebindToSigned<D> di;
    // s in [kMinNormal, 1) as one compare on the bits: bits - 0x00800000 below 0x3f000000
    // unsigned, tested signed after adding 2^31 (negative s and NaN fall out).
    const hn::RebindToUnsigned<D> du;
    const auto shifted_bits = hn::BitCast(di, hn::Add(hn::BitCast(du, s), hn::Set(du, 0x7f800000u)));
    const bool all_normal =
        hn::AllTrue(di, hn::Lt(shifted_bits, hn::Set(di, static_cast<int32_t>(0xbf000000u))));
    hn::Vec<D> log_self, log_rest;
    if (HWY_LIKELY(all_normal)) {
        log_self = log_normal(d, s);
        log_rest = log_one_minus<false>(d, s);
    } else {
        const auto floor = hn::Set(d, kBceLogClamp);
        log_self = clamp_below(log_any(d, s), floor);
        log_rest = log_one_minus<true>(d, s);
        log_rest = clamp_below(log_rest, floor);
    }
    // (t - 1) ln(1 - s) - t ln(s): the negation folded into the multiply-adds.
    const auto loss = hn::NegMulAdd(t, log_self, hn::Mul(hn::Sub(t, hn::Set(d, 1.0f)), log_rest));
    if constexpr (kWeighted)
        return hn::Mul(w, loss);
    else
        return loss;
}

}  // namespace nnplug::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // NNPLUG_BINARY_CROSS_ENTROPY_FORWARD_INL_H_
