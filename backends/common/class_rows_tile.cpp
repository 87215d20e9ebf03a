// Compiled once per target instruction set; the row functions dispatch at run time.
// clang-format off: foreach_target.h must stay first, before highway.h
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "class_rows_tile.cpp"
#include <hwy/foreach_target.h>
// clang-format on

#include <hwy/highway.h>
#include <nnplug/dtype_convert.h>

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "bce_with_logits-inl.h"
#include "class_rows_tile.h"
#include "vector_dtype-inl.h"

HWY_BEFORE_NAMESPACE();
namespace nnplug::simd::HWY_NAMESPACE {
namespace {

// Calls body(dtype constant) for a row's dtype.
template <class Body>
HWY_INLINE void with_dtype(int32_t dtype, Body&& body) {
    if (dtype == NNPLUG_DTYPE_F16)
        body(std::integral_constant<int32_t, NNPLUG_DTYPE_F16>{});
    else if (dtype == NNPLUG_DTYPE_BF16)
        body(std::integral_constant<int32_t, NNPLUG_DTYPE_BF16>{});
    else
        body(std::integral_constant<int32_t, NNPLUG_DTYPE_F32>{});
}

// One block's maximum and its sum of exp(x - maximum), the vectors first, the tail by lane.
template <int32_t Dtype>
HWY_INLINE void block_lse(const Raw<Dtype>* x, size_t n, float& max, double& sum) {
    const DF d;
    const size_t lanes = hn::Lanes(d);
    size_t full = n / lanes * lanes;
    auto vmax = hn::Set(d, -std::numeric_limits<float>::infinity());
    auto nan = hn::Zero(d);  // NaN anywhere in the block makes it NaN
    for (size_t i = 0; i < full; i += lanes) {
        const auto v = load<Dtype>(d, x + i);
        nan = hn::Or(nan, hn::VecFromMask(d, hn::IsNaN(v)));
        vmax = hn::Max(vmax, v);
    }
    float m = full > 0 ? hn::GetLane(hn::MaxOfLanes(d, vmax)) : -std::numeric_limits<float>::infinity();
    bool any_nan = full > 0 && !hn::AllFalse(d, hn::MaskFromVec(nan));
    for (size_t i = full; i < n; ++i) {
        const float v = load_one<Dtype>(x + i);
        any_nan |= std::isnan(v);
        m = std::max(m, v);
    }
    // Degenerate blocks: a NaN makes the row NaN; all -inf adds nothing; +inf makes the
    // log-sum-exp +inf, whatever else the row holds.
    if (any_nan || std::isinf(m)) {
        max = any_nan ? std::numeric_limits<float>::quiet_NaN() : m;
        sum = any_nan ? std::numeric_limits<double>::quiet_NaN() : m > 0 ? 1.0 : 0.0;
        return;
    }
    const auto vm = hn::Set(d, m);
    auto vsum = hn::Zero(d);
    for (size_t i = 0; i < full; i += lanes) vsum = hn::Add(vsum, exp_any(d, hn::Sub(load<Dtype>(d, x + i), vm)));
    double s = hn::GetLane(hn::SumOfLanes(d, vsum));
    for (size_t i = full; i < n; ++i) s += std::exp(static_cast<double>(load_one<Dtype>(x + i)) - m);
    max = m;
    sum = s;
}

}  // namespace

void LseUpdate(const void* x, int32_t dtype, int64_t count, LseState& state) {
    with_dtype(dtype, [&](auto type) {
        constexpr int32_t Dtype = decltype(type)::value;
        const auto* row = static_cast<const Raw<Dtype>*>(x);
        for (int64_t begin = 0; begin < count; begin += kLseBlock) {
            const size_t n = static_cast<size_t>(std::min<int64_t>(kLseBlock, count - begin));
            float m;
            double s;
            block_lse<Dtype>(row + begin, n, m, s);
            if (std::isnan(m) || std::isnan(state.max)) {
                state.max = std::numeric_limits<float>::quiet_NaN();
                state.sum = std::numeric_limits<double>::quiet_NaN();
            } else if (m > state.max) {
                state.sum = state.sum * std::exp(static_cast<double>(state.max) - m) + s;
                state.max = m;
            } else if (s > 0) {
                state.sum += s * std::exp(static_cast<double>(m) - state.max);
            }
        }
    });
}

double LogSoftmaxRow(const void* x, int32_t dtype, int64_t count, float lse, void* out, const float* weights,
                     bool want_sum) {
    double total = 0;
    with_dtype(dtype, [&](auto type) {
        constexpr int32_t Dtype = decltype(type)::value;
        const auto* in = static_cast<const Raw<Dtype>*>(x);
        auto* into = static_cast<Raw<Dtype>*>(out);
        const DF d;
        const size_t lanes = hn::Lanes(d), n = static_cast<size_t>(count), full = n / lanes * lanes;
        const auto vl = hn::Set(d, lse);
        auto acc = hn::Zero(d);
        for (size_t i = 0; i < full; i += lanes) {
            const auto lp = hn::Sub(load<Dtype>(d, in + i), vl);
            store<Dtype, false>(d, lp, into + i);
            if (want_sum) acc = hn::Add(acc, weights != nullptr ? hn::Mul(hn::LoadU(d, weights + i), lp) : lp);
        }
        total = want_sum ? static_cast<double>(hn::GetLane(hn::SumOfLanes(d, acc))) : 0.0;
        for (size_t i = full; i < n; ++i) {
            const float lp = load_one<Dtype>(in + i) - lse;
            store_from_f32(into, Dtype, static_cast<int64_t>(i), lp);
            if (want_sum) total += static_cast<double>(weights != nullptr ? weights[i] * lp : lp);
        }
    });
    return total;
}

void CrossEntropyGradRow(const void* lp, int32_t dtype, int64_t count, float a, float b, const float* weights,
                         void* out) {
    with_dtype(dtype, [&](auto type) {
        constexpr int32_t Dtype = decltype(type)::value;
        const auto* in = static_cast<const Raw<Dtype>*>(lp);
        auto* into = static_cast<Raw<Dtype>*>(out);
        const DF d;
        const size_t lanes = hn::Lanes(d), n = static_cast<size_t>(count), full = n / lanes * lanes;
        const auto va = hn::Set(d, a), vb = hn::Set(d, b);
        for (size_t i = 0; i < full; i += lanes) {
            const auto p = exp_any(d, load<Dtype>(d, in + i));
            const auto w = weights != nullptr ? hn::Mul(vb, hn::LoadU(d, weights + i)) : vb;
            store<Dtype, false>(d, hn::Sub(hn::Mul(va, p), w), into + i);
        }
        for (size_t i = full; i < n; ++i) {
            const float p = std::exp(load_one<Dtype>(in + i));
            store_from_f32(into, Dtype, static_cast<int64_t>(i), a * p - (weights != nullptr ? b * weights[i] : b));
        }
    });
}

}  // namespace nnplug::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace nnplug::simd {

HWY_EXPORT(LseUpdate);
HWY_EXPORT(LogSoftmaxRow);
HWY_EXPORT(CrossEntropyGradRow);

float LseState::value() const {
    if (std::isnan(max) || std::isnan(sum)) return std::numeric_limits<float>::quiet_NaN();
    if (max == std::numeric_limits<float>::infinity()) return max;
    return static_cast<float>(static_cast<double>(max) + std::log(sum));
}

void lse_update(const void* x, int32_t dtype, int64_t count, LseState& state) {
    HWY_DYNAMIC_DISPATCH(LseUpdate)(x, dtype, count, state);
}

double log_softmax_row(const void* x, int32_t dtype, int64_t count, float lse, void* out, const float* weights,
                       bool want_sum) {
    return HWY_DYNAMIC_DISPATCH(LogSoftmaxRow)(x, dtype, count, lse, out, weights, want_sum);
}

void cross_entropy_grad_row(const void* lp, int32_t dtype, int64_t count, float a, float b, const float* weights,
                            void* out) {
    HWY_DYNAMIC_DISPATCH(CrossEntropyGradRow)(lp, dtype, count, a, b, weights, out);
}

}  // namespace nnplug::simd
#endif  // HWY_ONCE
