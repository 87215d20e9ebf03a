// Compiled once per target instruction set; the tile functions dispatch at run time.
// clang-format off: foreach_target.h must stay first, before highway.h
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kl_div_tile.cpp"
#include <hwy/foreach_target.h>
// clang-format on

#include <hwy/highway.h>

#include <cstddef>
#include <cstring>

#include "kl_div-inl.h"
#include "kl_div_tile.h"

HWY_BEFORE_NAMESPACE();
namespace nnplug::simd::HWY_NAMESPACE {
namespace {

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;
constexpr size_t kMaxLanes = HWY_MAX_BYTES / sizeof(float);

// out[0..n) = math(d, a, b, c) over three inputs (c may repeat b); the tail goes through zeroed
// vectors, so no load or store passes the end.
template <class Math>
HWY_INLINE void tile3(const float* a, const float* b, const float* c, float* out, int64_t count,
                      const Math& math) {
    const DF d;
    const size_t n = static_cast<size_t>(count), lanes = hn::Lanes(d);
    size_t i = 0;
    for (; i + lanes <= n; i += lanes)
        hn::StoreU(math(d, hn::LoadU(d, a + i), hn::LoadU(d, b + i), hn::LoadU(d, c + i)), d, out + i);
    if (i == n) return;
    const size_t rest = n - i;
    HWY_ALIGN float ta[kMaxLanes] = {}, tb[kMaxLanes] = {}, tc[kMaxLanes] = {};
    HWY_ALIGN float result[kMaxLanes];
    std::memcpy(ta, a + i, rest * sizeof(float));
    std::memcpy(tb, b + i, rest * sizeof(float));
    std::memcpy(tc, c + i, rest * sizeof(float));
    hn::Store(math(d, hn::Load(d, ta), hn::Load(d, tb), hn::Load(d, tc)), d, result);
    std::memcpy(out + i, result, rest * sizeof(float));
}

}  // namespace

void KlDivForwardTile(const float* self, const float* target, bool log_target, float* out, int64_t count) {
    if (log_target)
        tile3(self, target, target, out, count,
              [](DF d, VF x, VF t, VF) { return kl_div_forward<true>(d, x, t); });
    else
        tile3(self, target, target, out, count,
              [](DF d, VF x, VF t, VF) { return kl_div_forward<false>(d, x, t); });
}

void KlDivBackwardTile(const float* grad, const float* target, bool log_target, float scale, float* out,
                       int64_t count) {
    const VF s = hn::Set(DF(), scale);
    if (log_target)
        tile3(grad, target, target, out, count,
              [s](DF d, VF g, VF t, VF) { return kl_div_backward<true>(d, g, t, s); });
    else
        tile3(grad, target, target, out, count,
              [s](DF d, VF g, VF t, VF) { return kl_div_backward<false>(d, g, t, s); });
}

void KlDivTargetBackwardTile(const float* grad, const float* self, const float* target, bool log_target,
                             float scale, float* out, int64_t count) {
    const VF s = hn::Set(DF(), scale);
    if (log_target)
        tile3(grad, self, target, out, count,
              [s](DF d, VF g, VF x, VF t) { return kl_div_target_backward<true>(d, g, x, t, s); });
    else
        tile3(grad, self, target, out, count,
              [s](DF d, VF g, VF x, VF t) { return kl_div_target_backward<false>(d, g, x, t, s); });
}

}  // namespace nnplug::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace nnplug::simd {

HWY_EXPORT(KlDivForwardTile);
HWY_EXPORT(KlDivBackwardTile);
HWY_EXPORT(KlDivTargetBackwardTile);

void kl_div_forward_tile(const float* self, const float* target, bool log_target, float* out, int64_t count) {
    HWY_DYNAMIC_DISPATCH(KlDivForwardTile)(self, target, log_target, out, count);
}

void kl_div_backward_tile(const float* grad, const float* target, bool log_target, float scale, float* out,
                          int64_t count) {
    HWY_DYNAMIC_DISPATCH(KlDivBackwardTile)(grad, target, log_target, scale, out, count);
}

void kl_div_target_backward_tile(const float* grad, const float* self, const float* target, bool log_target,
                                 float scale, float* out, int64_t count) {
    HWY_DYNAMIC_DISPATCH(KlDivTargetBackwardTile)(grad, self, target, log_target, scale, out, count);
}

}  // namespace nnplug::simd
#endif
