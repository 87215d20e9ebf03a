// The Kullback-Leibler divergence loss and its two gradients in Highway vectors, shared by the
// backends: the operations of nnplug/ops/kl_div_math.h in the same order (explicit Mul, Sub,
// Add and Div), with the vector log of binary_cross_entropy_forward-inl.h and the vector exp of
// binary_cross_entropy_with_logits-inl.h in place of logf and expf, so that cpu_tbb's kernels and atlas_emu's
// tiles give the same bits.
// Include it from a file compiled once per target (foreach_target.h); the guard lets it be
// included again for each target.
#if defined(NNPLUG_KL_DIV_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NNPLUG_KL_DIV_INL_H_
#undef NNPLUG_KL_DIV_INL_H_
#else
#define NNPLUG_KL_DIV_INL_H_
#endif

#include <hwy/highway.h>

#include "binary_cross_entropy_with_logits-inl.h"

HWY_BEFORE_NAMESPACE();
namespace nnplug::simd::HWY_NAMESPACE {

// t * (log(t == 0 ? 1 : t) - x), or exp(t) * (t - x) when logTarget.
template <bool kLogTarget, class D>
HWY_INLINE hn::Vec<D> kl_div_forward(D d, hn::Vec<D> x, hn::Vec<D> t) {
    if constexpr (kLogTarget) return hn::Mul(exp_any(d, t), hn::Sub(t, x));
    const auto argument = hn::IfThenElse(hn::Eq(t, hn::Zero(d)), hn::Set(d, 1.0f), t);
    return hn::Mul(t, hn::Sub(log_any(d, argument), x));
}

// (-(w * g)) * scale, w = t or exp(t).
template <bool kLogTarget, class D>
HWY_INLINE hn::Vec<D> kl_div_backward(D d, hn::Vec<D> g, hn::Vec<D> t, hn::Vec<D> scale) {
    hn::Vec<D> w = t;
    if constexpr (kLogTarget) w = exp_any(d, t);
    return hn::Mul(hn::Neg(hn::Mul(w, g)), scale);
}

// gs = g * scale; ((gs * log(t)) - (gs * x)) + ((gs * t) / t), or with e = exp(t)
// ((gs * (t - x)) * e) + (gs * e) when logTarget.
template <bool kLogTarget, class D>
HWY_INLINE hn::Vec<D> kl_div_target_backward(D d, hn::Vec<D> g, hn::Vec<D> x, hn::Vec<D> t,
                                             hn::Vec<D> scale) {
    const auto gs = hn::Mul(g, scale);
    if constexpr (kLogTarget) {
        const auto e = exp_any(d, t);
        return hn::Add(hn::Mul(hn::Mul(gs, hn::Sub(t, x)), e), hn::Mul(gs, e));
    }
    return hn::Add(hn::Sub(hn::Mul(gs, log_any(d, t)), hn::Mul(gs, x)), hn::Div(hn::Mul(gs, t), t));
}

}  // namespace nnplug::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // NNPLUG_KL_DIV_INL_H_
