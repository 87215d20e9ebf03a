// Compiled once per target instruction set; forward_tile dispatches at run time.
// clang-format off: foreach_target.h must stay first, before highway.h
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "binary_cross_entropy_forward_tile.cpp"
#include <hwy/foreach_target.h>
// clang-format on

#include <hwy/highway.h>

#include <cstddef>
#include <cstring>

#include "binary_cross_entropy_forward-inl.h"
#include "binary_cross_entropy_forward_tile.h"

HWY_BEFORE_NAMESPACE();
namespace nnplug::simd::HWY_NAMESPACE {

template <bool kWeighted>
HWY_INLINE void forward_lanes(const float* self, const float* target, const float* weight, float* out,
                              size_t n) {
    const hn::ScalableTag<float> d;
    const size_t lanes = hn::Lanes(d);
    const auto one = hn::Set(d, 1.0f);
    size_t i = 0;
    for (; i + lanes <= n; i += lanes) {
        const auto w = kWeighted ? hn::LoadU(d, weight + i) : one;
        hn::StoreU(forward_loss<kWeighted>(d, hn::LoadU(d, self + i), hn::LoadU(d, target + i), w), d,
                   out + i);
    }
    if (i == n) return;
    // The tail through zeroed vectors, so no load or store passes the end.
    constexpr size_t kMaxLanes = HWY_MAX_BYTES / sizeof(float);
    HWY_ALIGN float s[kMaxLanes] = {}, t[kMaxLanes] = {}, w[kMaxLanes] = {}, result[kMaxLanes];
    const size_t rest = n - i;
    std::memcpy(s, self + i, rest * sizeof(float));
    std::memcpy(t, target + i, rest * sizeof(float));
    if (kWeighted) std::memcpy(w, weight + i, rest * sizeof(float));
    hn::Store(forward_loss<kWeighted>(d, hn::Load(d, s), hn::Load(d, t), kWeighted ? hn::Load(d, w) : one), d,
              result);
    std::memcpy(out + i, result, rest * sizeof(float));
}

void ForwardTile(const float* self, const float* target, const float* weight, float* out, int64_t count) {
    const size_t n = static_cast<size_t>(count);
    if (weight != nullptr)
        forward_lanes<true>(self, target, weight, out, n);
    else
        forward_lanes<false>(self, target, weight, out, n);
}

}  // namespace nnplug::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace nnplug::simd {

HWY_EXPORT(ForwardTile);

void forward_tile(const float* self, const float* target, const float* weight, float* out, int64_t count) {
    HWY_DYNAMIC_DISPATCH(ForwardTile)(self, target, weight, out, count);
}

}  // namespace nnplug::simd
#endif
