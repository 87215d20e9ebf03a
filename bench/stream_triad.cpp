// clang-format off: foreach_target.h must stay first, before highway.h
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "stream_triad.cpp"
#include <hwy/foreach_target.h>
// clang-format on

#include <hwy/highway.h>

#include "stream_triad.h"

HWY_BEFORE_NAMESPACE();
namespace nnplug::bench::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void TriadRange(float* a, const float* b, const float* c, float s, int64_t begin, int64_t end) {
    const hn::ScalableTag<float> d;
    const auto scalar = hn::Set(d, s);
    const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
    int64_t i = begin;
    for (; i + lanes <= end; i += lanes)  // Mul then Add, as written: no contraction
        hn::StoreU(hn::Add(hn::LoadU(d, b + i), hn::Mul(scalar, hn::LoadU(d, c + i))), d, a + i);
    for (; i < end; ++i) a[i] = b[i] + s * c[i];
}

}  // namespace nnplug::bench::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace nnplug::bench {
HWY_EXPORT(TriadRange);
void triad_range(float* a, const float* b, const float* c, float s, int64_t begin, int64_t end) {
    HWY_DYNAMIC_DISPATCH(TriadRange)(a, b, c, s, begin, end);
}
}  // namespace nnplug::bench
#endif
