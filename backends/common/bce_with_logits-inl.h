// The binary cross-entropy on logits and its two gradients in Highway vectors, shared
// by the backends: the operations of nnplug/ops/bce_with_logits_math.h in the same
// order (explicit Mul/Add/Sub/Div; multiply-adds only inside exp and log), with a
// vector exp in place of expf and bce_forward-inl.h's table log in place of logf. A NaN
// result is always the quiet NaN 0x7fc00000, so that results are the same bytes whatever
// loop the math is compiled into.
// Include it from a file compiled once per target (foreach_target.h); the guard lets
// it be included again for each target.
//
// exp(x) = 2^n exp(r) with n = round(x / ln 2) and r = x - n ln 2 in two parts (Cody
// and Waite; n ln2_high is exact), exp(r) a degree-7 polynomial on |r| <= ln(2)/2, and
// 2^n applied as two exact powers of two so that results down to the subnormals round
// once and 2^128 overflows to +inf as IEEE does. Within 0.87 float32 ulp of exp with FMA,
// 0.94 without, so at most one ulp from the correctly rounded value (measured in
// tests/cpu_tbb/bce_with_logits_simd_test.cpp); exp(-inf) = 0, exp(+inf) = +inf, NaN stays NaN.
#if defined(NNPLUG_BCE_WITH_LOGITS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NNPLUG_BCE_WITH_LOGITS_INL_H_
#undef NNPLUG_BCE_WITH_LOGITS_INL_H_
#else
#define NNPLUG_BCE_WITH_LOGITS_INL_H_
#endif

#include <hwy/highway.h>

#include <limits>

#include "bce_forward-inl.h"

HWY_BEFORE_NAMESPACE();
namespace nnplug::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// exp(x) for every float x.
template <class D>
HWY_INLINE hn::Vec<D> exp_any(D d, hn::Vec<D> x) {
    const hn::RebindToSigned<D> di;
    // Beyond [-104, 89] exp is 0 or +inf in float32; the clamp keeps n within [-150, 129]
    // and NaN (zeroed first: Min and Max may drop it) away from the integer conversion.
    const auto nan = hn::IsNaN(x);
    const auto clamped = hn::Min(hn::Max(hn::IfThenZeroElse(nan, x), hn::Set(d, -104.0f)), hn::Set(d, 89.0f));
    const auto n = hn::Round(hn::Mul(clamped, hn::Set(d, 1.44269504088896341f)));
    // ln2_high has 9 significant bits, so n * ln2_high is exact for |n| < 2^15.
    auto r = hn::NegMulAdd(n, hn::Set(d, 0.693359375f), clamped);
    r = hn::NegMulAdd(n, hn::Set(d, -2.12194440e-4f), r);
    // exp(r) with Taylor coefficients to 1/7! (truncation below 2^-27 relative).
    auto q = hn::MulAdd(hn::Set(d, 1.98412698e-4f), r, hn::Set(d, 1.38888889e-3f));
    q = hn::MulAdd(q, r, hn::Set(d, 8.33333333e-3f));
    q = hn::MulAdd(q, r, hn::Set(d, 4.16666667e-2f));
    q = hn::MulAdd(q, r, hn::Set(d, 1.66666667e-1f));
    q = hn::MulAdd(q, r, hn::Set(d, 0.5f));
#if HWY_NATIVE_FMA
    // 1 + r (1 + r q): Horner down to the constant, the last step rounding once (0.87 ulp).
    const auto mantissa = hn::MulAdd(hn::MulAdd(q, r, hn::Set(d, 1.0f)), r, hn::Set(d, 1.0f));
#else
    // (r + r^2 q) + 1: without fused steps this order rounds least (0.94 ulp; Horner: 1.18).
    const auto mantissa = hn::Add(hn::MulAdd(q, hn::Mul(r, r), r), hn::Set(d, 1.0f));
#endif
    // 2^n as 2^(n >> 1) * 2^(n - (n >> 1)): both factors are normal, the first product
    // exact, so the second rounds once, subnormal and overflowing results included.
    const auto ni = hn::ConvertTo(di, n);
    const auto half = hn::ShiftRight<1>(ni);
    const auto bias = hn::Set(di, 127);
    const auto first = hn::BitCast(d, hn::ShiftLeft<23>(hn::Add(half, bias)));
    const auto second = hn::BitCast(d, hn::ShiftLeft<23>(hn::Add(hn::Sub(ni, half), bias)));
    return hn::IfThenElse(nan, x, hn::Mul(hn::Mul(mantissa, first), second));
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

// log(1 + exp(-|x|)) as the canonical softplus_parts: log(1 + e), not log1p (1 + e is in
// [1, 2], where log_normal applies).
template <class D>
HWY_INLINE hn::Vec<D> softplus_part(D d, hn::Vec<D> x) {
    const auto e = exp_any(d, hn::Neg(hn::Abs(x)));
    return log_normal(d, hn::Add(hn::Set(d, 1.0f), e));
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
template <bool kWeighted, bool kPositive, class D>
HWY_INLINE hn::Vec<D> logits_forward(D d, hn::Vec<D> x, hn::Vec<D> y, hn::Vec<D> w, hn::Vec<D> p) {
    const auto one = hn::Set(d, 1.0f);
    const auto m = clamp_below(hn::Neg(x), hn::Zero(d));
    const auto sp = softplus_part(d, x);
    const auto linear = hn::Mul(hn::Sub(one, y), x);
    hn::Vec<D> loss;
    if constexpr (kPositive) loss = hn::Add(linear, hn::Mul(hn::Add(hn::Mul(hn::Sub(p, one), y), one), hn::Add(sp, m)));
    else loss = hn::Add(hn::Add(linear, m), sp);
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
HWY_INLINE hn::Vec<D> logits_backward(D d, hn::Vec<D> g, hn::Vec<D> x, hn::Vec<D> y, hn::Vec<D> w, hn::Vec<D> p,
                                      hn::Vec<D> scale) {
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

#endif  // NNPLUG_BCE_WITH_LOGITS_INL_H_
