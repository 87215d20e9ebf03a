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
#include <cstring>

#include "binary_cross_entropy_with_logits-inl.h"
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

// exp(x) to about 2^-14 relative, for rows of a 16-bit dtype, whose values and results
// round to 2^-9 (bfloat16) or 2^-12 (float16) at best: a degree-4 polynomial on |r| <=
// ln(2)/2 (truncation 4.2e-5 relative before the scale) and one 2^n, x clamped to [-87, 88]
// so that n stays normal. NaN stays NaN.
template <class D>
HWY_INLINE hn::Vec<D> exp_short(D d, hn::Vec<D> x) {
    const hn::RebindToSigned<D> di;
    const auto clamped = hn::Min(hn::Max(x, hn::Set(d, -87.0f)), hn::Set(d, 88.0f));
    const auto n = hn::Round(hn::Mul(clamped, hn::Set(d, 1.44269504088896341f)));
    auto r = hn::NegMulAdd(n, hn::Set(d, 0.693359375f), clamped);
    r = hn::NegMulAdd(n, hn::Set(d, -2.12194440e-4f), r);
    auto q = hn::MulAdd(hn::Set(d, 4.16666667e-2f), r, hn::Set(d, 1.66666667e-1f));
    q = hn::MulAdd(q, r, hn::Set(d, 0.5f));
    q = hn::MulAdd(q, r, hn::Set(d, 1.0f));
    const auto mantissa = hn::MulAdd(q, r, hn::Set(d, 1.0f));
    const auto scale = hn::BitCast(d, hn::ShiftLeft<23>(hn::Add(hn::ConvertTo(di, n), hn::Set(di, 127))));
    return hn::IfThenElse(hn::IsNaN(x), x, hn::Mul(mantissa, scale));
}

// The exp a row of Dtype needs: float32 rows the full-precision one (exp_any).
template <int32_t Dtype, class D>
HWY_INLINE hn::Vec<D> row_exp(D d, hn::Vec<D> x) {
    if constexpr (Dtype == NNPLUG_DTYPE_F32)
        return exp_any(d, x);
    else
        return exp_short(d, x);
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
    for (size_t i = 0; i < full; i += lanes)
        vsum = hn::Add(vsum, row_exp<Dtype>(d, hn::Sub(load<Dtype>(d, x + i), vm)));
    double s = hn::GetLane(hn::SumOfLanes(d, vsum));
    for (size_t i = full; i < n; ++i) s += std::exp(static_cast<double>(load_one<Dtype>(x + i)) - m);
    max = m;
    sum = s;
}

// Adds a row's blocks to state (LseState: the running max and sum), block after block.
template <int32_t Dtype>
HWY_INLINE void lse_row(const Raw<Dtype>* row, int64_t count, LseState& state) {
    for (int64_t begin = 0; begin < count; begin += kLseBlock) {
        LseState block;
        block_lse<Dtype>(row + begin, static_cast<size_t>(std::min<int64_t>(kLseBlock, count - begin)),
                         block.max, block.sum);
        state.merge(block);
    }
}

// A whole row's state: its segments, each block after block, merged in order.
template <int32_t Dtype>
HWY_INLINE LseState segmented_lse(const Raw<Dtype>* row, int64_t count) {
    LseState state;
    for (int64_t begin = 0; begin < count; begin += kLseSegment) {
        LseState segment;
        lse_row<Dtype>(row + begin, std::min<int64_t>(kLseSegment, count - begin), segment);
        state.merge(segment);
    }
    return state;
}

// log_softmax of a whole row, its sum taken per segment and added in order.
template <int32_t Dtype>
HWY_INLINE double segmented_log_softmax(const Raw<Dtype>* in, int64_t count, float lse, Raw<Dtype>* into,
                                        const float* weights, bool want_sum);

template <int32_t Dtype>
HWY_INLINE double log_softmax(const Raw<Dtype>* in, size_t n, float lse, Raw<Dtype>* into,
                              const float* weights, bool want_sum) {
    const DF d;
    const size_t lanes = hn::Lanes(d), full = n / lanes * lanes;
    const auto vl = hn::Set(d, lse);
    auto acc = hn::Zero(d);
    for (size_t i = 0; i < full; i += lanes) {
        const auto lp = hn::Sub(load<Dtype>(d, in + i), vl);
        store<Dtype, false>(d, lp, into + i);
        if (want_sum) acc = hn::Add(acc, weights != nullptr ? hn::Mul(hn::LoadU(d, weights + i), lp) : lp);
    }
    double total = want_sum ? static_cast<double>(hn::GetLane(hn::SumOfLanes(d, acc))) : 0.0;
    for (size_t i = full; i < n; ++i) {
        const float lp = load_one<Dtype>(in + i) - lse;
        store_from_f32(into, Dtype, static_cast<int64_t>(i), lp);
        if (want_sum) total += static_cast<double>(weights != nullptr ? weights[i] * lp : lp);
    }
    return total;
}

template <int32_t Dtype>
HWY_INLINE double segmented_log_softmax(const Raw<Dtype>* in, int64_t count, float lse, Raw<Dtype>* into,
                                        const float* weights, bool want_sum) {
    double total = 0;
    for (int64_t begin = 0; begin < count; begin += kLseSegment)
        total +=
            log_softmax<Dtype>(in + begin, static_cast<size_t>(std::min<int64_t>(kLseSegment, count - begin)),
                               lse, into + begin, weights != nullptr ? weights + begin : nullptr, want_sum);
    return total;
}

template <int32_t Dtype>
HWY_INLINE void grad_row(const Raw<Dtype>* in, size_t n, float a, float b, const float* weights,
                         Raw<Dtype>* into) {
    const DF d;
    const size_t lanes = hn::Lanes(d), full = n / lanes * lanes;
    const auto va = hn::Set(d, a), vb = hn::Set(d, b);
    for (size_t i = 0; i < full; i += lanes) {
        const auto p = row_exp<Dtype>(d, load<Dtype>(d, in + i));
        const auto w = weights != nullptr ? hn::Mul(vb, hn::LoadU(d, weights + i)) : vb;
        store<Dtype, false>(d, hn::Sub(hn::Mul(va, p), w), into + i);
    }
    for (size_t i = full; i < n; ++i) {
        const float p = std::exp(load_one<Dtype>(in + i));
        store_from_f32(into, Dtype, static_cast<int64_t>(i),
                       a * p - (weights != nullptr ? b * weights[i] : b));
    }
}

// Short rows go through the vector lanes side by side: a block of as many rows as a vector
// has lanes is transposed into columns (one vector per class) in L1, so every operation
// covers one class of `lanes` rows at once.
constexpr size_t kColumnsMax = 32;  // rows of at most this many classes

template <int32_t Dtype>
HWY_INLINE float element(const Raw<Dtype>* p) {
    if constexpr (Dtype == NNPLUG_DTYPE_F32)
        return *p;
    else if constexpr (Dtype == NNPLUG_DTYPE_BF16)
        return bf16_to_f32(*p);
    else
        return f16_to_f32(*p);
}

#if HWY_TARGET != HWY_SCALAR  // 128-bit vectors
// Four rows of four floats (src, src_stride apart) stored as four columns (dst, dst_stride
// apart), by 128-bit interleaves: a quarter of the loads and stores of element copies.
HWY_INLINE void transpose4(const float* src, size_t src_stride, float* dst, size_t dst_stride) {
    const hn::Full128<float> d;
    const hn::Repartition<uint64_t, decltype(d)> d64;
    const auto a = hn::LoadU(d, src), b = hn::LoadU(d, src + src_stride);
    const auto c = hn::LoadU(d, src + 2 * src_stride), e = hn::LoadU(d, src + 3 * src_stride);
    const auto ab_low = hn::BitCast(d64, hn::InterleaveLower(d, a, b));   // a0 b0 a1 b1
    const auto ce_low = hn::BitCast(d64, hn::InterleaveLower(d, c, e));   // c0 e0 c1 e1
    const auto ab_high = hn::BitCast(d64, hn::InterleaveUpper(d, a, b));  // a2 b2 a3 b3
    const auto ce_high = hn::BitCast(d64, hn::InterleaveUpper(d, c, e));  // c2 e2 c3 e3
    hn::StoreU(hn::BitCast(d, hn::InterleaveLower(d64, ab_low, ce_low)), d, dst);
    hn::StoreU(hn::BitCast(d, hn::InterleaveUpper(d64, ab_low, ce_low)), d, dst + dst_stride);
    hn::StoreU(hn::BitCast(d, hn::InterleaveLower(d64, ab_high, ce_high)), d, dst + 2 * dst_stride);
    hn::StoreU(hn::BitCast(d, hn::InterleaveUpper(d64, ab_high, ce_high)), d, dst + 3 * dst_stride);
}

// dst[c * dst_stride + r] = src[r * src_stride + c] for r < rows, c < cols: whole 4x4 tiles
// by transpose4, the elements past them one at a time.
HWY_INLINE void transpose(const float* src, size_t src_stride, size_t rows, size_t cols, float* dst,
                          size_t dst_stride) {
    const size_t tile_rows = rows / 4 * 4, tile_cols = cols / 4 * 4;
    for (size_t r = 0; r < tile_rows; r += 4)
        for (size_t c = 0; c < tile_cols; c += 4)
            transpose4(src + r * src_stride + c, src_stride, dst + c * dst_stride + r, dst_stride);
    for (size_t r = 0; r < rows; ++r)
        for (size_t c = r < tile_rows ? tile_cols : 0; c < cols; ++c)
            dst[c * dst_stride + r] = src[r * src_stride + c];
}
#endif

// cols[c * lanes + r] = row r's class c, for r < rows; the lanes past rows get `pad`.
template <int32_t Dtype>
HWY_INLINE void columns_in(const Raw<Dtype>* in, int64_t stride, size_t rows, size_t n, float pad,
                           float* cols) {
    const size_t lanes = hn::Lanes(DF());
#if HWY_TARGET != HWY_SCALAR
    if constexpr (Dtype == NNPLUG_DTYPE_F32) {
        if (rows == lanes) return transpose(in, static_cast<size_t>(stride), rows, n, cols, lanes);
    }
#endif
    for (size_t r = 0; r < lanes; ++r)
        for (size_t c = 0; c < n; ++c)
            cols[c * lanes + r] = r < rows ? element<Dtype>(in + r * stride + c) : pad;
}

template <int32_t Dtype>
HWY_INLINE void columns_out(const float* cols, size_t rows, size_t n, Raw<Dtype>* into, int64_t stride) {
    const size_t lanes = hn::Lanes(DF());
#if HWY_TARGET != HWY_SCALAR
    if constexpr (Dtype == NNPLUG_DTYPE_F32) {
        return transpose(cols, lanes, n, rows, into, static_cast<size_t>(stride));
    }
#endif
    for (size_t r = 0; r < rows; ++r)
        for (size_t c = 0; c < n; ++c)
            store_from_f32(into + r * stride, Dtype, static_cast<int64_t>(c), cols[c * lanes + r]);
}

// cols is not cleared: columns_in writes every lane of the n columns the functions read (a
// 2 KiB clear per block of rows cost a tenth of the forward), which GCC cannot follow.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
// log_softmax of up to `lanes` short rows at once; false (nothing written) when a row holds
// NaN or an infinite maximum, which the per-row path's IEEE rules take. NaN is looked for
// in every column: x86's Max returns its second operand for NaN, so the maximum loses it.
template <int32_t Dtype>
HWY_INLINE bool columns_log_softmax(const RowBlock& rows, int64_t first, size_t count, const float* weights,
                                    bool want_sum, float* lse, double* sums) {
    const DF d;
    const size_t lanes = hn::Lanes(d), n = static_cast<size_t>(rows.classes);
    HWY_ALIGN float cols[kColumnsMax * kMaxLanes];  // columns_in writes the n columns read
    const auto* in = static_cast<const Raw<Dtype>*>(rows.in) + first * rows.in_stride;
    columns_in<Dtype>(in, rows.in_stride, count, n, 0.0f, cols);
    auto vmax = hn::Load(d, cols);
    auto nan = hn::VecFromMask(d, hn::IsNaN(vmax));
    for (size_t c = 1; c < n; ++c) {
        const auto v = hn::Load(d, cols + c * lanes);
        nan = hn::Or(nan, hn::VecFromMask(d, hn::IsNaN(v)));
        vmax = hn::Max(vmax, v);
    }
    if (!hn::AllFalse(d, hn::MaskFromVec(nan)) || !hn::AllTrue(d, hn::IsFinite(vmax))) return false;
    auto vsum = hn::Zero(d);
    for (size_t c = 0; c < n; ++c)
        vsum = hn::Add(vsum, row_exp<Dtype>(d, hn::Sub(hn::Load(d, cols + c * lanes), vmax)));
    const auto vlse = hn::Add(vmax, log_normal(d, vsum));  // the sum is in [1, n]
    auto acc = hn::Zero(d);
    for (size_t c = 0; c < n; ++c) {
        const auto lp = hn::Sub(hn::Load(d, cols + c * lanes), vlse);
        hn::Store(lp, d, cols + c * lanes);
        if (want_sum) acc = hn::Add(acc, weights != nullptr ? hn::Mul(hn::Set(d, weights[c]), lp) : lp);
    }
    columns_out<Dtype>(cols, count, n, static_cast<Raw<Dtype>*>(rows.out) + first * rows.out_stride,
                       rows.out_stride);
    HWY_ALIGN float lse_lanes[kMaxLanes], sum_lanes[kMaxLanes];
    hn::Store(vlse, d, lse_lanes);
    hn::Store(acc, d, sum_lanes);
    for (size_t r = 0; r < count; ++r) {
        lse[first + static_cast<int64_t>(r)] = lse_lanes[r];
        sums[first + static_cast<int64_t>(r)] = want_sum ? sum_lanes[r] : 0.0;
    }
    return true;
}

// The gradient of up to `lanes` short rows at once, the target's element and ignored rows
// (target -1) included.
template <int32_t Dtype>
HWY_INLINE void columns_grad(const RowBlock& rows, int64_t first, size_t count, const GradRows& g,
                             const float* weights) {
    const DF d;
    const hn::RebindToSigned<DF> di;
    const size_t lanes = hn::Lanes(d), n = static_cast<size_t>(rows.classes);
    HWY_ALIGN float cols[kColumnsMax * kMaxLanes];  // columns_in writes the n columns read
    HWY_ALIGN float a[kMaxLanes] = {}, b[kMaxLanes] = {}, nll[kMaxLanes] = {};
    HWY_ALIGN int32_t target[kMaxLanes];
    for (size_t r = 0; r < lanes; ++r) {
        const size_t row = static_cast<size_t>(first) + r;
        const bool live = r < count && g.target[row] >= 0;
        a[r] = live ? g.a[row] : 0.0f;
        b[r] = live ? g.b[row] : 0.0f;
        nll[r] = live ? g.nll[row] : 0.0f;
        target[r] = live ? static_cast<int32_t>(g.target[row]) : -1;
    }
    const auto* in = static_cast<const Raw<Dtype>*>(rows.in) + first * rows.in_stride;
    columns_in<Dtype>(in, rows.in_stride, count, n, 0.0f, cols);
    const auto va = hn::Load(d, a), vb = hn::Load(d, b), vnll = hn::Load(d, nll);
    const auto vt = hn::Load(di, target);
    const auto ignored = hn::RebindMask(d, hn::Lt(vt, hn::Zero(di)));
    for (size_t c = 0; c < n; ++c) {
        const auto p = row_exp<Dtype>(d, hn::Load(d, cols + c * lanes));
        const auto w = weights != nullptr ? hn::Set(d, weights[c]) : hn::Set(d, 1.0f);
        auto v = hn::Sub(hn::Mul(va, p), hn::Mul(vb, w));
        const auto at_target = hn::RebindMask(d, hn::Eq(vt, hn::Set(di, static_cast<int32_t>(c))));
        v = hn::IfThenElse(at_target, hn::Sub(v, vnll), v);
        hn::Store(hn::IfThenZeroElse(ignored, v), d, cols + c * lanes);
    }
    columns_out<Dtype>(cols, count, n, static_cast<Raw<Dtype>*>(rows.out) + first * rows.out_stride,
                       rows.out_stride);
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

}  // namespace

void LseUpdate(const void* x, int32_t dtype, int64_t count, LseState& state) {
    with_dtype(dtype, [&](auto type) {
        constexpr int32_t Dtype = decltype(type)::value;
        lse_row<Dtype>(static_cast<const Raw<Dtype>*>(x), count, state);
    });
}

double LogSoftmaxRow(const void* x, int32_t dtype, int64_t count, float lse, void* out, const float* weights,
                     bool want_sum) {
    double total = 0;
    with_dtype(dtype, [&](auto type) {
        constexpr int32_t Dtype = decltype(type)::value;
        total = log_softmax<Dtype>(static_cast<const Raw<Dtype>*>(x), static_cast<size_t>(count), lse,
                                   static_cast<Raw<Dtype>*>(out), weights, want_sum);
    });
    return total;
}

void CrossEntropyGradRow(const void* lp, int32_t dtype, int64_t count, float a, float b, const float* weights,
                         void* out) {
    with_dtype(dtype, [&](auto type) {
        constexpr int32_t Dtype = decltype(type)::value;
        grad_row<Dtype>(static_cast<const Raw<Dtype>*>(lp), static_cast<size_t>(count), a, b, weights,
                        static_cast<Raw<Dtype>*>(out));
    });
}

LseState RowLse(const void* x, int32_t dtype, int64_t count) {
    LseState state;
    with_dtype(dtype, [&](auto type) {
        constexpr int32_t Dtype = decltype(type)::value;
        state = segmented_lse<Dtype>(static_cast<const Raw<Dtype>*>(x), count);
    });
    return state;
}

void LogSoftmaxRows(const RowBlock& rows, const float* weights, bool want_sum, float* lse, double* sums) {
    with_dtype(rows.dtype, [&](auto type) {
        constexpr int32_t Dtype = decltype(type)::value;
        const size_t lanes = hn::Lanes(DF()), n = static_cast<size_t>(rows.classes);
        for (int64_t first = 0; first < rows.rows; first += static_cast<int64_t>(lanes)) {
            const size_t count =
                static_cast<size_t>(std::min<int64_t>(static_cast<int64_t>(lanes), rows.rows - first));
            if (n <= kColumnsMax &&
                columns_log_softmax<Dtype>(rows, first, count, weights, want_sum, lse, sums))
                continue;
            for (int64_t r = first; r < first + static_cast<int64_t>(count); ++r) {
                const auto* in = static_cast<const Raw<Dtype>*>(rows.in) + r * rows.in_stride;
                LseState state;
                lse_row<Dtype>(in, rows.classes, state);
                lse[r] = state.value();
                sums[r] = log_softmax<Dtype>(in, n, lse[r],
                                             static_cast<Raw<Dtype>*>(rows.out) + r * rows.out_stride,
                                             weights, want_sum);
            }
        }
    });
}

void CrossEntropyGradRows(const RowBlock& rows, const GradRows& g, const float* weights) {
    with_dtype(rows.dtype, [&](auto type) {
        constexpr int32_t Dtype = decltype(type)::value;
        const size_t lanes = hn::Lanes(DF()), n = static_cast<size_t>(rows.classes);
        if (n <= kColumnsMax) {
            for (int64_t first = 0; first < rows.rows; first += static_cast<int64_t>(lanes))
                columns_grad<Dtype>(rows, first,
                                    static_cast<size_t>(std::min<int64_t>(lanes, rows.rows - first)), g,
                                    weights);
            return;
        }
        for (int64_t r = 0; r < rows.rows; ++r) {
            const auto* in = static_cast<const Raw<Dtype>*>(rows.in) + r * rows.in_stride;
            auto* into = static_cast<Raw<Dtype>*>(rows.out) + r * rows.out_stride;
            const int64_t t = g.target[r];
            if (t < 0) {
                for (size_t c = 0; c < n; ++c) store_from_f32(into, Dtype, static_cast<int64_t>(c), 0.0f);
                continue;
            }
            grad_row<Dtype>(in, n, g.a[r], g.b[r], weights, into);
            const float p = std::exp(element<Dtype>(in + t));
            const float w = weights != nullptr ? weights[t] : 1.0f;
            store_from_f32(into, Dtype, t, g.a[r] * p - g.b[r] * w - g.nll[r]);
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
HWY_EXPORT(LogSoftmaxRows);
HWY_EXPORT(RowLse);
HWY_EXPORT(CrossEntropyGradRows);

void LseState::merge(const LseState& later) {
    if (std::isnan(later.max) || std::isnan(max)) {
        max = std::numeric_limits<float>::quiet_NaN();
        sum = std::numeric_limits<double>::quiet_NaN();
    } else if (later.max > max) {
        sum = sum * std::exp(static_cast<double>(max) - later.max) + later.sum;
        max = later.max;
    } else if (later.sum > 0) {
        sum += later.sum * std::exp(static_cast<double>(later.max) - max);
    }
}

LseState row_lse(const void* x, int32_t dtype, int64_t count) {
    return HWY_DYNAMIC_DISPATCH(RowLse)(x, dtype, count);
}

float LseState::value() const {
    if (std::isnan(max) || std::isnan(sum)) return std::numeric_limits<float>::quiet_NaN();
    if (max == std::numeric_limits<float>::infinity()) return max;
    return static_cast<float>(static_cast<double>(max) + std::log(sum));
}

void lse_update(const void* x, int32_t dtype, int64_t count, LseState& state) {
    HWY_DYNAMIC_DISPATCH(LseUpdate)(x, dtype, count, state);
}

double log_softmax_row(const void* x, int32_t dtype, int64_t count, float lse, void* out,
                       const float* weights, bool want_sum) {
    return HWY_DYNAMIC_DISPATCH(LogSoftmaxRow)(x, dtype, count, lse, out, weights, want_sum);
}

void cross_entropy_grad_row(const void* lp, int32_t dtype, int64_t count, float a, float b,
                            const float* weights, void* out) {
    HWY_DYNAMIC_DISPATCH(CrossEntropyGradRow)(lp, dtype, count, a, b, weights, out);
}

void log_softmax_rows(const RowBlock& rows, const float* weights, bool want_sum, float* lse, double* sums) {
    HWY_DYNAMIC_DISPATCH(LogSoftmaxRows)(rows, weights, want_sum, lse, sums);
}

void cross_entropy_grad_rows(const RowBlock& rows, const GradRows& g, const float* weights) {
    HWY_DYNAMIC_DISPATCH(CrossEntropyGradRows)(rows, g, weights);
}

}  // namespace nnplug::simd
#endif  // HWY_ONCE
