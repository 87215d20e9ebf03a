// Compiled once per target instruction set; the tile functions dispatch at run time.
// clang-format off: foreach_target.h must stay first, before highway.h
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "binary_cross_entropy_with_logits_tile.cpp"
#include <hwy/foreach_target.h>
// clang-format on

#include <hwy/highway.h>

#include <cstddef>
#include <cstring>
#include <utility>

#include "binary_cross_entropy_with_logits-inl.h"
#include "binary_cross_entropy_with_logits_tile.h"

HWY_BEFORE_NAMESPACE();
namespace nnplug::simd::HWY_NAMESPACE {
namespace {

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;
constexpr size_t kMaxLanes = HWY_MAX_BYTES / sizeof(float);

// out[0..n) = math(d, one vector per input...); a null input arrives as zeros (the math
// ignores it). The tail goes through zeroed vectors, so no load or store passes the end.
template <size_t kCount, class Math, size_t... I>
HWY_INLINE void tile_loop(const float* const (&in)[kCount], float* out, size_t n, const Math& math,
                          std::index_sequence<I...>) {
    const DF d;
    const size_t lanes = hn::Lanes(d);
    const auto read = [&](const float* p, size_t i) {
        return p != nullptr ? hn::LoadU(d, p + i) : hn::Zero(d);
    };
    size_t i = 0;
    for (; i + lanes <= n; i += lanes) hn::StoreU(math(d, read(in[I], i)...), d, out + i);
    if (i == n) return;
    const size_t rest = n - i;
    HWY_ALIGN float tail[kCount][kMaxLanes] = {};
    HWY_ALIGN float result[kMaxLanes];
    for (size_t k = 0; k < kCount; ++k)
        if (in[k] != nullptr) std::memcpy(tail[k], in[k] + i, rest * sizeof(float));
    hn::Store(math(d, hn::Load(d, tail[I])...), d, result);
    std::memcpy(out + i, result, rest * sizeof(float));
}

template <size_t kCount, class Math>
HWY_INLINE void tile(const float* const (&in)[kCount], float* out, int64_t count, const Math& math) {
    tile_loop(in, out, static_cast<size_t>(count), math, std::make_index_sequence<kCount>());
}

// Calls body(weighted, positive) with both as compile-time booleans.
template <class Body>
HWY_INLINE void with_optional(const float* weight, const float* pos_weight, Body&& body) {
    if (weight != nullptr) {
        if (pos_weight != nullptr)
            body(std::true_type{}, std::true_type{});
        else
            body(std::true_type{}, std::false_type{});
    } else {
        if (pos_weight != nullptr)
            body(std::false_type{}, std::true_type{});
        else
            body(std::false_type{}, std::false_type{});
    }
}

}  // namespace

void LogitsForwardTile(const float* self, const float* target, const float* weight, const float* pos_weight,
                       float* out, int64_t count) {
    with_optional(weight, pos_weight, [&](auto weighted, auto positive) {
        const float* const in[] = {self, target, weight, pos_weight};
        tile(in, out, count, [](DF d, VF x, VF y, VF w, VF p) {
            return logits_forward<decltype(weighted)::value, decltype(positive)::value>(d, x, y, w, p);
        });
    });
}

void LogitsBackwardTile(const float* grad, const float* self, const float* target, const float* weight,
                        const float* pos_weight, float scale, float* out, int64_t count) {
    with_optional(weight, pos_weight, [&](auto weighted, auto positive) {
        const float* const in[] = {grad, self, target, weight, pos_weight};
        const VF factor = hn::Set(DF(), scale);
        tile(in, out, count, [factor](DF d, VF g, VF x, VF y, VF w, VF p) {
            return logits_backward<decltype(weighted)::value, decltype(positive)::value>(d, g, x, y, w, p,
                                                                                         factor);
        });
    });
}

void LogitsTargetBackwardTile(const float* grad, const float* self, const float* weight,
                              const float* pos_weight, float scale, float* out, int64_t count) {
    with_optional(weight, pos_weight, [&](auto weighted, auto positive) {
        const float* const in[] = {grad, self, weight, pos_weight};
        const VF factor = hn::Set(DF(), scale);
        tile(in, out, count, [factor](DF d, VF g, VF x, VF w, VF p) {
            return logits_target_backward<decltype(weighted)::value, decltype(positive)::value>(d, g, x, w, p,
                                                                                                factor);
        });
    });
}

void ExpTile(const float* x, float* out, int64_t count) {
    const float* const in[] = {x};
    tile(in, out, count, [](DF d, VF v) { return exp_any(d, v); });
}

void SoftplusPartTile(const float* x, float* out, int64_t count) {
    const float* const in[] = {x};
    tile(in, out, count, [](DF d, VF v) { return softplus_part(d, v); });
}

void ExpMinusAbsTile(const float* x, float* out, int64_t count) {
    const float* const in[] = {x};
    tile(in, out, count, [](DF d, VF v) { return exp_minus_abs(d, v); });
}

void LogOneToTwoTile(const float* u, float* out, int64_t count) {
    const float* const in[] = {u};
    tile(in, out, count, [](DF d, VF v) { return log_one_to_two(d, v); });
}

void Log1pExpTile(const float* x, float* out, int64_t count) {
    const float* const in[] = {x};
    tile(in, out, count, [](DF d, VF v) { return log1p_unit(d, exp_any(d, hn::Neg(hn::Abs(v)))); });
}

void SigmoidTile(const float* x, float* out, int64_t count) {
    const float* const in[] = {x};
    tile(in, out, count, [](DF d, VF v) { return sigmoid(d, v); });
}

}  // namespace nnplug::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace nnplug::simd {

HWY_EXPORT(LogitsForwardTile);
HWY_EXPORT(LogitsBackwardTile);
HWY_EXPORT(LogitsTargetBackwardTile);
HWY_EXPORT(ExpTile);
HWY_EXPORT(SoftplusPartTile);
HWY_EXPORT(ExpMinusAbsTile);
HWY_EXPORT(LogOneToTwoTile);
HWY_EXPORT(Log1pExpTile);
HWY_EXPORT(SigmoidTile);

void logits_forward_tile(const float* self, const float* target, const float* weight, const float* pos_weight,
                         float* out, int64_t count) {
    HWY_DYNAMIC_DISPATCH(LogitsForwardTile)(self, target, weight, pos_weight, out, count);
}
void logits_backward_tile(const float* grad, const float* self, const float* target, const float* weight,
                          const float* pos_weight, float scale, float* out, int64_t count) {
    HWY_DYNAMIC_DISPATCH(LogitsBackwardTile)(grad, self, target, weight, pos_weight, scale, out, count);
}
void logits_target_backward_tile(const float* grad, const float* self, const float* weight,
                                 const float* pos_weight, float scale, float* out, int64_t count) {
    HWY_DYNAMIC_DISPATCH(LogitsTargetBackwardTile)(grad, self, weight, pos_weight, scale, out, count);
}
void exp_tile(const float* x, float* out, int64_t count) {
    HWY_DYNAMIC_DISPATCH(ExpTile)(x, out, count);
}
void softplus_part_tile(const float* x, float* out, int64_t count) {
    HWY_DYNAMIC_DISPATCH(SoftplusPartTile)(x, out, count);
}
void exp_minus_abs_tile(const float* x, float* out, int64_t count) {
    HWY_DYNAMIC_DISPATCH(ExpMinusAbsTile)(x, out, count);
}
void log_one_to_two_tile(const float* u, float* out, int64_t count) {
    HWY_DYNAMIC_DISPATCH(LogOneToTwoTile)(u, out, count);
}
void log1p_exp_tile(const float* x, float* out, int64_t count) {
    HWY_DYNAMIC_DISPATCH(Log1pExpTile)(x, out, count);
}
void sigmoid_tile(const float* x, float* out, int64_t count) {
    HWY_DYNAMIC_DISPATCH(SigmoidTile)(x, out, count);
}

}  // namespace nnplug::simd
#endif
