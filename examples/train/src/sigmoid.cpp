// clang-format off: foreach_target.h must stay first, before highway.h
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "sigmoid.cpp"
#include <hwy/foreach_target.h>
// clang-format on

#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

#include <cstring>

#include "sigmoid.h"

HWY_BEFORE_NAMESPACE();
namespace train::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <class D>
HWY_INLINE hn::Vec<D> SigmoidOf(D d, hn::Vec<D> z) {
    // hn::Exp holds for arguments up to 104; exp(-z) is +inf from 89 on, so larger ones
    // are clamped there.
    const auto limit = hn::Set(d, 104.0f);
    auto minus_z = hn::Neg(z);
    minus_z = hn::IfThenElse(hn::Gt(minus_z, limit), limit, minus_z);
    const auto one = hn::Set(d, 1.0f);
    const auto p = hn::Div(one, hn::Add(one, hn::Exp(d, minus_z)));
    return hn::IfThenElse(hn::IsNaN(z), z, p);  // hn::Exp does not carry a NaN through
}

void SigmoidArray(const float* z, float* p, int64_t count) {
    const hn::ScalableTag<float> d;
    const auto lanes = static_cast<int64_t>(hn::Lanes(d));
    int64_t i = 0;
    for (; i + lanes <= count; i += lanes) hn::StoreU(SigmoidOf(d, hn::LoadU(d, z + i)), d, p + i);
    if (i == count) return;
    HWY_ALIGN float tail[hn::MaxLanes(d)] = {};
    std::memcpy(tail, z + i, static_cast<size_t>(count - i) * sizeof(float));
    hn::Store(SigmoidOf(d, hn::Load(d, tail)), d, tail);
    std::memcpy(p + i, tail, static_cast<size_t>(count - i) * sizeof(float));
}

}  // namespace train::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace train {

HWY_EXPORT(SigmoidArray);

void sigmoid(const float* z, float* p, int64_t count) {
    if (count > 0) HWY_DYNAMIC_DISPATCH(SigmoidArray)(z, p, count);
}

}  // namespace train
#endif
