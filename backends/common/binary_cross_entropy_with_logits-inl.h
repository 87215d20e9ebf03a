// The binary cross-entropy on logits and its two gradients in Highway vectors, shared
// by the backends: the operations of nnplug/ops/binary_cross_entropy_with_logits_math.h in the same
// order (explicit Mul/Add/Sub/Div; multiply-adds only inside exp and log), with vector
// exps in place of expf and table logs in place of logf. A NaN result is always the
// quiet NaN 0x7fc00000, so that results are the same bytes whatever loop the math is
// compiled into.
// Include it from a file compiled once per target (foreach_target.h); the guard lets
// it be included again for each target.
//
// The gradients' exp(x) = 2^n exp(r) with n = round(x / ln 2) and r = x - n ln 2 in two
// parts (Cody and Waite; n ln2_high is exact), exp(r) a degree-7 polynomial on
// |r| <= ln(2)/2, and 2^n applied by vscalefps (AVX-512) or as two exact powers of two,
// so that results down to the subnormals round once and 2^128 overflows to +inf as IEEE
// does. Within 0.87 float32 ulp of exp with FMA, 0.94 without, so at most one ulp from the
// correctly rounded value (measured in tests/cpu_tbb/binary_cross_entropy_with_logits_simd_test.cpp);
// exp(-inf) = 0, exp(+inf) = +inf, NaN stays NaN.
//
// The loss needs only log(1 + exp(-|x|)) with 1 + e rounded to float32, so it has its
// own, shorter pair (about half the operations): exp(-|x|) with -|x| clamped at -20
// (beyond -24 ln 2 = -16.64, 1 + e rounds to 1 either way), n from a shifter add whose
// bits are 2^n directly, one reduction constant with FMA, and a degree-6 minimax
// polynomial (relative error 3e-9); then ln(u) for u = 1 + e in [1, 2] from a 16-entry
// table whose part 0 is [1, 1 + 1/32) with c = 1 and a degree-4 polynomial, without the
// exponent, subnormal or special-value handling of a general log.
#if defined(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_INL_H_
#undef NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_INL_H_
#else
#define NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_INL_H_
#endif

#include <hwy/highway.h>

#include <limits>

#include "binary_cross_entropy_forward-inl.h"

HWY_BEFORE_NAMESPACE();
namespace nnplug::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// exp(r) for |r| <= ln(2)/2 with Taylor coefficients to 1/7! (truncation below 2^-27
// relative): the mantissa of exp_any.
template <class D>
HWY_INLINE hn::Vec<D> exp_reduced(D d, hn::Vec<D> r) {
    auto q = hn::MulAdd(hn::Set(d, 1.98412698e-4f), r, hn::Set(d, 1.38888889e-3f));
    q = hn::MulAdd(q, r, hn::Set(d, 8.33333333e-3f));
    q = hn::MulAdd(q, r, hn::Set(d, 4.16666667e-2f));
    q = hn::MulAdd(q, r, hn::Set(d, 1.66666667e-1f));
    q = hn::MulAdd(q, r, hn::Set(d, 0.5f));
#if HWY_NATIVE_FMA
    // 1 + r (1 + r q): Horner down to the constant, the last step rounding once (0.87 ulp).
    return hn::MulAdd(hn::MulAdd(q, r, hn::Set(d, 1.0f)), r, hn::Set(d, 1.0f));
#else
    // (r + r^2 q) + 1: without fused steps this order rounds least (0.94 ulp; Horner: 1.18).
    return hn::Add(hn::MulAdd(q, hn::Mul(r, r), r), hn::Set(d, 1.0f));
#endif
}

#undef NNPLUG_EXP_SCALEF
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
#define NNPLUG_EXP_SCALEF 1
// m * 2^n for integral n in one instruction (vscalefps), rounded once as m * 2^n is.
HWY_INLINE hn::Vec512<float> times_power_of_two(hn::Vec512<float> m, hn::Vec512<float> n) {
    return hn::Vec512<float>{_mm512_scalef_ps(m.raw, n.raw)};
}
HWY_INLINE hn::Vec256<float> times_power_of_two(hn::Vec256<float> m, hn::Vec256<float> n) {
    return hn::Vec256<float>{_mm256_scalef_ps(m.raw, n.raw)};
}
template <size_t N>
HWY_INLINE hn::Vec128<float, N> times_power_of_two(hn::Vec128<float, N> m, hn::Vec128<float, N> n) {
    return hn::Vec128<float, N>{_mm_scalef_ps(m.raw, n.raw)};
}
#else
#define NNPLUG_EXP_SCALEF 0
#endif

// exp(x) for x in [-104, 89], or with kNonPositive in [-104, 0] (a NaN x: unspecified).
// n = round(x / ln 2) is within [-150, 129], and 2^n applies to the mantissa m rounded
// once, so subnormal and overflowing results round as IEEE does: with AVX-512 by
// vscalefps, else as m * 2^(n >> 1) * 2^(n - (n >> 1)) (both factors normal, the first
// product exact), or for n <= 0 as m * 2^(n + 65) * 2^-65. n comes from an even shifter
// (ties to even, as Round), whose sum holds n plus the exponent bias in its low bits.
template <bool kNonPositive, class D>
HWY_INLINE hn::Vec<D> exp_clamped(D d, hn::Vec<D> x) {
    const auto scaled = hn::Mul(x, hn::Set(d, 1.44269504088896341f));
#if NNPLUG_EXP_SCALEF
    const auto n = hn::Round(scaled);
#else
    // 1.5 * 2^23 + 192 leaves n + 192, the exponent bits of 2^(n + 65); + 254 leaves
    // 2 * 127 + n, whose halves are the exponent bits of 2^(n >> 1) and 2^(n - (n >> 1)).
    const auto shifter = hn::Set(d, kNonPositive ? 0x1.8p23f + 192.0f : 0x1.8p23f + 254.0f);
    const auto shifted = hn::Add(scaled, shifter);
    const auto n = hn::Sub(shifted, shifter);
#endif
    // ln2_high has 9 significant bits, so n * ln2_high is exact for |n| < 2^15.
    auto r = hn::NegMulAdd(n, hn::Set(d, 0.693359375f), x);
    r = hn::NegMulAdd(n, hn::Set(d, -2.12194440e-4f), r);
    const auto mantissa = exp_reduced(d, r);
#if NNPLUG_EXP_SCALEF
    return times_power_of_two(mantissa, n);
#else
    const hn::RebindToUnsigned<D> du;
    const auto bits = hn::BitCast(du, shifted);
    if constexpr (kNonPositive) {
        const auto first = hn::BitCast(d, hn::ShiftLeft<23>(bits));
        return hn::Mul(hn::Mul(mantissa, first), hn::Set(d, 0x1p-65f));
    }
    const auto half = hn::ShiftRight<1>(bits);
    const auto first = hn::BitCast(d, hn::ShiftLeft<23>(half));
    const auto second = hn::BitCast(d, hn::ShiftLeft<23>(hn::Sub(bits, half)));
    return hn::Mul(hn::Mul(mantissa, first), second);
#endif
}

// exp(x) for every float x.
template <class D>
HWY_INLINE hn::Vec<D> exp_any(D d, hn::Vec<D> x) {
    // Beyond [-104, 89] exp is 0 or +inf in float32; a NaN x is returned as it is.
    const auto clamped = hn::Min(hn::Max(x, hn::Set(d, -104.0f)), hn::Set(d, 89.0f));
    return hn::IfThenElse(hn::IsNaN(x), x, exp_clamped<false>(d, clamped));
}

// exp(x) for x <= 0, bit for bit exp_any's (a NaN x: unspecified).
template <class D>
HWY_INLINE hn::Vec<D> exp_nonpositive(D d, hn::Vec<D> x) {
    return exp_clamped<true>(d, hn::Max(x, hn::Set(d, -104.0f)));
}

// log1p(e) for e in [0, 1] (or NaN): ln(u) + c / u with u = 1 + e rounded and c = e - (u - 1)
// its exact rounding error (u - 1 is exact), so that small e keeps its digits.
template <class D>
HWY_INLINE hn::Vec<D> log1p_unit(D d, hn::Vec<D> e) {
    const auto one = hn::Set(d, 1.0f);
    const auto u = hn::Add(one, e);
    const auto c = hn::Sub(e, hn::Sub(u, one));
    return hn::Add(log_normal(d, u), hn::Div(c, u));
}

// exp(-|x|) for the loss, where only 1 + exp(-|x|) rounded to float32 matters: -|x| is
// clamped at -20 (exp(-20) < 2^-24, so 1 + e rounds to 1 as for every |x| above 24 ln 2),
// which keeps 2^n normal and needs no overflow, subnormal or NaN handling (a NaN x gives
// an unspecified e; the loss is NaN through its linear term). n comes from the shifter
// 1.5 * 2^23 + 127: the sum's low bits are n + 127, the exponent bits of 2^n. With FMA,
// r = a - n ln 2 rounds once: ln 2's float32 error (1.9e-9) moves e by |n| times that
// relatively, at most 1.4e-9 absolutely; without FMA, ln 2 in two parts as in exp_any.
// exp(r) on |r| <= ln(2)/2: 1 + r + r^2 (c2 + ... + c6 r^4), minimax in relative error
// (3.1e-9, fitted with mpmath). The result is mantissa * scale, scale = 2^n.
template <class D>
struct ExpMinusAbs {
    hn::Vec<D> mantissa, scale;
};

template <class D>
HWY_INLINE ExpMinusAbs<D> exp_minus_abs_parts(D d, hn::Vec<D> x) {
    const hn::RebindToSigned<D> di;
    const auto a = hn::Max(hn::Or(x, hn::Set(d, -0.0f)), hn::Set(d, -20.0f));
    const auto shifter = hn::Set(d, 0x1.8p23f + 127.0f);
    const auto shifted = hn::MulAdd(a, hn::Set(d, 1.44269504088896341f), shifter);
    const auto n = hn::Sub(shifted, shifter);
#if HWY_NATIVE_FMA
    const auto r = hn::NegMulAdd(n, hn::Set(d, 0.693147180559945309f), a);
#else
    const auto r =
        hn::NegMulAdd(n, hn::Set(d, -2.12194440e-4f), hn::NegMulAdd(n, hn::Set(d, 0.693359375f), a));
#endif
    auto q = hn::MulAdd(hn::Set(d, 0x1.6a2438p-10f), r, hn::Set(d, 0x1.1239e0p-7f));
    q = hn::MulAdd(q, r, hn::Set(d, 0x1.5558f2p-5f));
    q = hn::MulAdd(q, r, hn::Set(d, 0x1.555492p-3f));
    q = hn::MulAdd(q, r, hn::Set(d, 0x1.fffffcp-2f));
#if HWY_NATIVE_FMA
    const auto mantissa = hn::MulAdd(hn::MulAdd(q, r, hn::Set(d, 1.0f)), r, hn::Set(d, 1.0f));
#else
    const auto mantissa = hn::Add(hn::MulAdd(q, hn::Mul(r, r), r), hn::Set(d, 1.0f));
#endif
    return {mantissa, hn::BitCast(d, hn::ShiftLeft<23>(hn::BitCast(di, shifted)))};
}

// exp(-|x|) rounded to float32 (for tests; the loss takes 1 + it below). Within 0.94 ulp
// for |x| <= 8, 1.4 ulp up to 20, and 0.81 * 2^-24 absolutely.
template <class D>
HWY_INLINE hn::Vec<D> exp_minus_abs(D d, hn::Vec<D> x) {
    const ExpMinusAbs<D> e = exp_minus_abs_parts(d, x);
    return hn::Mul(e.mantissa, e.scale);
}

#if HWY_NATIVE_FMA
// ln(u) for u in [1, 2]: part j (the bits of u from those of 1 - 1/32 on, >> 19, at most
// 15) holds u within 1/32 of 1 + j/16, part 0 [1, 1 + 1/32) and part 15 [1.90625, 2]. With
// FMA the table holds 1/c, chosen so that ln(c) = -ln(1/c) is within 2^-34 relative of
// its float32 (fitted with mpmath); part 0 has c = 1.
alignas(64) static constexpr float kUnitInverseC[16] = {
    0x1p+0f,        0x1.e1f452p-1f, 0x1.c711d4p-1f, 0x1.af1f4ap-1f, 0x1.99a968p-1f, 0x1.8624d2p-1f,
    0x1.746c6cp-1f, 0x1.6430f4p-1f, 0x1.5565e2p-1f, 0x1.479f6cp-1f, 0x1.3b15a8p-1f, 0x1.2f7f74p-1f,
    0x1.2498p-1f,   0x1.1a7f44p-1f, 0x1.110276p-1f, 0x1.0615a6p-1f};
alignas(64) static constexpr float kUnitLogC[16] = {
    0.0f,           0x1.ef69ap-5f,  0x1.e2d004p-4f, 0x1.601e68p-3f, 0x1.c8b076p-3f, 0x1.165524p-2f,
    0x1.45ee94p-2f, 0x1.7390c2p-2f, 0x1.9f009ap-2f, 0x1.c92d4cp-2f, 0x1.f12294p-2f, 0x1.0bc01cp-1f,
    0x1.1e7bf6p-1f, 0x1.3076c8p-1f, 0x1.41f462p-1f, 0x1.56dd56p-1f};
#else
// Without FMA, r = (u - c) * (1/c): u - c is exact (u is within a factor 2 of c), the
// product rounds once; c is chosen so that ln(c) is within 2^-34 relative of its float32.
alignas(64) static constexpr float kUnitC[16] = {
    0x1p+0f,        0x1.0fef3p+0f,  0x1.1ffbc6p+0f, 0x1.300aap+0f,  0x1.40132cp+0f, 0x1.5003b8p+0f,
    0x1.6005acp+0f, 0x1.6ffa74p+0f, 0x1.80062p+0f,  0x1.8ffb28p+0f, 0x1.a0117ap+0f, 0x1.afebe2p+0f,
    0x1.c00c26p+0f, 0x1.cff3f4p+0f, 0x1.dff0fcp+0f, 0x1.f3e9bap+0f};
alignas(64) static constexpr float kUnitInverseC[16] = {
    0x1p+0f,        0x1.e1ffacp-1f, 0x1.c7232p-1f,  0x1.af195ap-1f, 0x1.99811p-1f,  0x1.86141p-1f,
    0x1.745718p-1f, 0x1.6431e4p-1f, 0x1.554fe4p-1f, 0x1.47b20cp-1f, 0x1.3b0676p-1f, 0x1.2f766ep-1f,
    0x1.248a5ap-1f, 0x1.1a82ecp-1f, 0x1.11199cp-1f, 0x1.06308cp-1f};
alignas(64) static constexpr float kUnitLogC[16] = {
    0.0f,           0x1.eea8a2p-5f, 0x1.e2345ap-4f, 0x1.603a9ap-3f, 0x1.c97a2cp-3f, 0x1.16812p-2f,
    0x1.46293cp-2f, 0x1.738e1p-2f,  0x1.9f4294p-2f, 0x1.c8f316p-2f, 0x1.f153fap-2f, 0x1.0bcf56p-1f,
    0x1.1e93d8p-1f, 0x1.307028p-1f, 0x1.41c8fap-1f, 0x1.56a8cep-1f};
#endif

// ln(u) for u in [1, 2] (other u: unspecified): ln(c) + log1p(r), r = u / c - 1 within
// [-0.0293, 0.0313], log1p(r) = r + r^2 (a2 + a3 r + a4 r^2), minimax in relative error
// over that range (2.9e-8). Part 0 has c = 1 and ln(c) = 0, so r = u - 1 exactly and small
// results keep their relative accuracy.
template <class D>
HWY_INLINE hn::Vec<D> log_one_to_two(D d, hn::Vec<D> u) {
    const hn::RebindToSigned<D> di;
    const hn::RebindToUnsigned<D> du;
    // Unsigned, so that a lane outside the domain (a zero in a padded tail) still gets an
    // index in [0, 16), as the table lookup requires, instead of a negative one.
    const auto from_start = hn::Sub(hn::BitCast(du, u), hn::Set(du, 0x3f7c0000u));
    const auto index = hn::BitCast(di, hn::Min(hn::ShiftRight<19>(from_start), hn::Set(du, 15u)));
#if HWY_NATIVE_FMA
    const auto r = hn::MulSub(u, lookup16(d, kUnitInverseC, index), hn::Set(d, 1.0f));
#else
    const auto r = hn::Mul(hn::Sub(u, lookup16(d, kUnitC, index)), lookup16(d, kUnitInverseC, index));
#endif
    auto q = hn::MulAdd(hn::Set(d, -0x1.fee712p-3f), r, hn::Set(d, 0x1.557d32p-2f));
    q = hn::MulAdd(q, r, hn::Set(d, -0x1.000008p-1f));
    return hn::Add(lookup16(d, kUnitLogC, index), hn::MulAdd(q, hn::Mul(r, r), r));
}

// log(1 + exp(-|x|)) as the canonical softplus_parts: log(1 + e), not log1p, with 1 + e
// rounded to float32 in [1, 2]. With FMA, 1 + mantissa * scale rounds once: e is the
// product unrounded, which is nearer exp(-|x|) than its float32.
template <class D>
HWY_INLINE hn::Vec<D> softplus_part(D d, hn::Vec<D> x) {
    const ExpMinusAbs<D> e = exp_minus_abs_parts(d, x);
    return log_one_to_two(d, hn::MulAdd(e.mantissa, e.scale, hn::Set(d, 1.0f)));
}

// sigmoid(x) = 1 / (1 + exp(-x)): exactly 0 where exp(-x) overflows, 1 where it underflows.
template <class D>
HWY_INLINE hn::Vec<D> sigmoid(D d, hn::Vec<D> x) {
    const auto one = hn::Set(d, 1.0f);
    return hn::Div(one, hn::Add(one, exp_any(d, hn::Neg(x))));
}

// min(z, 0) with NaN passing, as bce_log_sigmoid's z > 0 ? 0 : z.
template <class D>
HWY_INLINE hn::Vec<D> min_zero(D d, hn::Vec<D> z) {
    return hn::IfThenZeroElse(hn::Gt(z, hn::Zero(d)), z);
}

// NaN results as the one quiet NaN 0x7fc00000. Which NaN an operation passes on when both
// of its operands are NaN is the first operand's on x86, and compilers swap the operands
// of commutative operations as register allocation suits them: without this the sign of
// a NaN would depend on how the calling loop was compiled (cpu_tbb's splat inputs against
// atlas_emu's tiles), not on the inputs.
template <class D>
HWY_INLINE hn::Vec<D> one_nan(D d, hn::Vec<D> v) {
    return hn::IfThenElse(hn::IsNaN(v), hn::Set(d, std::numeric_limits<float>::quiet_NaN()), v);
}

// The loss: without posWeight ((1 - y) * x + m) + sp, with it
// (1 - y) * x + ((p - 1) * y + 1) * (sp + m); then * w (absent: not multiplied, as * 1 is exact).
// m = max(-x, 0) as a plain Max: it can differ from the canonical clamp_below only for a
// NaN x, where the loss is NaN through (1 - y) * x anyway, and in the sign of a zero m for
// x = +-0, where sp = ln 2 is added to it; so the loss is the same.
template <bool kWeighted, bool kPositive, class D>
HWY_INLINE hn::Vec<D> logits_forward(D d, hn::Vec<D> x, hn::Vec<D> y, hn::Vec<D> w, hn::Vec<D> p) {
    const auto one = hn::Set(d, 1.0f);
    const auto m = hn::Max(hn::Neg(x), hn::Zero(d));
    const auto sp = softplus_part(d, x);
    const auto linear = hn::Mul(hn::Sub(one, y), x);
    hn::Vec<D> loss;
    if constexpr (kPositive)
        loss = hn::Add(linear, hn::Mul(hn::Add(hn::Mul(hn::Sub(p, one), y), one), hn::Add(sp, m)));
    else
        loss = hn::Add(hn::Add(linear, m), sp);
    if constexpr (kWeighted) loss = hn::Mul(loss, w);
    return one_nan(d, loss);
}

// r * g, * w when weighted, * scale: the common tail of both gradients.
template <bool kWeighted, class D>
HWY_INLINE hn::Vec<D> times_grad(D d, hn::Vec<D> r, hn::Vec<D> g, hn::Vec<D> w, hn::Vec<D> scale) {
    r = hn::Mul(r, g);
    if constexpr (kWeighted) r = hn::Mul(r, w);
    return one_nan(d, hn::Mul(r, scale));
}

// Gradient w.r.t. self: without posWeight s - y, with it ((t + 1) - y) * s - t, t = p * y.
template <bool kWeighted, bool kPositive, class D>
HWY_INLINE hn::Vec<D> logits_backward(D d, hn::Vec<D> g, hn::Vec<D> x, hn::Vec<D> y, hn::Vec<D> w,
                                      hn::Vec<D> p, hn::Vec<D> scale) {
    const auto s = sigmoid(d, x);
    hn::Vec<D> r;
    if constexpr (kPositive) {
        const auto t = hn::Mul(p, y);
        r = hn::Sub(hn::Mul(hn::Sub(hn::Add(t, hn::Set(d, 1.0f)), y), s), t);
    } else {
        r = hn::Sub(s, y);
    }
    return times_grad<kWeighted>(d, r, g, w, scale);
}

// Gradient w.r.t. target: without posWeight -x, with it log_sigmoid(-x) - p * log_sigmoid(x),
// log_sigmoid(z) = min(z, 0) - log1p(exp(-|z|)): both share the one log1p(exp(-|x|)).
template <bool kWeighted, bool kPositive, class D>
HWY_INLINE hn::Vec<D> logits_target_backward(D d, hn::Vec<D> g, hn::Vec<D> x, hn::Vec<D> w, hn::Vec<D> p,
                                             hn::Vec<D> scale) {
    hn::Vec<D> r;
    if constexpr (kPositive) {
        const auto tail = log1p_unit(d, exp_any(d, hn::Neg(hn::Abs(x))));
        const auto of_minus = hn::Sub(min_zero(d, hn::Neg(x)), tail);
        const auto of_plus = hn::Sub(min_zero(d, x), tail);
        r = hn::Sub(of_minus, hn::Mul(p, of_plus));
    } else {
        r = hn::Neg(x);
    }
    return times_grad<kWeighted>(d, r, g, w, scale);
}

}  // namespace nnplug::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_INL_H_
