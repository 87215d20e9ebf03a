// The op-agnostic vector loops of cpu_tbb: a VectorRun walked a vector at a time into
// the output (map_run) or into a double sum (sum_run), for any op given as a math
// functor. Include it from a file compiled once per target (foreach_target.h); the
// guard lets it be included again for each target.
//
// A math functor declares
//   static constexpr OpOperands kOperands;  // its input slots and their accesses
//   static constexpr bool kPrefetch;        // ask for the inputs 1 KiB ahead
//   template <OperandAccess... Modes> VF apply(DF d, VF input...) const;
// apply gets one vector per input, in kOperands order, and each input's access at
// compile time (an absent input arrives as zeros: the math supplies its default).
//
// A math functor whose chain of operations per vector is long may declare
//   static constexpr bool kStaged = true;
//   template <OperandAccess... Modes> VF first(DF d, VF input...) const;
//   template <OperandAccess... Modes> VF second(DF d, VF kept, VF input...) const;
// with apply = second(first(...), ...): the loops then run first over a block into an
// L1 buffer, then second over it. Each loop's chains are short enough for the core to
// overlap many vectors; one loop over the whole chain keeps too few of them in flight.
#if defined(NNPLUG_CPU_VECTOR_WALK_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NNPLUG_CPU_VECTOR_WALK_INL_H_
#undef NNPLUG_CPU_VECTOR_WALK_INL_H_
#else
#define NNPLUG_CPU_VECTOR_WALK_INL_H_
#endif

#include <hwy/cache_control.h>
#include <hwy/highway.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "vector_dtype-inl.h"
#include "vector_run.h"

HWY_BEFORE_NAMESPACE();
namespace nnplug::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using simd::HWY_NAMESPACE::can_stream;
using simd::HWY_NAMESPACE::DF;
using simd::HWY_NAMESPACE::kMaxLanes;
using simd::HWY_NAMESPACE::load;
using simd::HWY_NAMESPACE::load_one;
using simd::HWY_NAMESPACE::Raw;
using simd::HWY_NAMESPACE::store;
using simd::HWY_NAMESPACE::VF;

// The access of each input of a run, as template arguments.
template <OperandAccess... Modes>
struct AccessModes {};

// Ops that compute long per vector leave the hardware prefetcher behind on large
// inputs: their loops ask for the data this far ahead (prefetches never fault).
constexpr size_t kPrefetchBytes = 1024;

// Elements per block of a staged math functor (its loops take whole vectors or pairs of
// them): its buffer and the inputs it was read from stay in L1.
constexpr size_t kStageBlock = 2 * kMaxLanes > 256 ? 2 * kMaxLanes : 256;

template <class Math, class = void>
struct IsStaged : std::false_type {};
template <class Math>
struct IsStaged<Math, std::void_t<decltype(Math::kStaged)>> : std::bool_constant<Math::kStaged> {};

// The inputs of one run as Math reads them: each one's first element (or splat
// value), with Modes its access and I its position in Math::kOperands.
template <int32_t Dtype, class Math, class Modes, class Positions>
class RunInputs;

template <int32_t Dtype, class Math, OperandAccess... Modes, size_t... I>
class RunInputs<Dtype, Math, AccessModes<Modes...>, std::index_sequence<I...>> {
    using T = Raw<Dtype>;
    static constexpr size_t kCount = sizeof...(I);

public:
    HWY_INLINE explicit RunInputs(const VectorRun& run)
        : base_{static_cast<const T*>(run.input[Math::kOperands.inputs[I].slot])...},
          splat_{splat_value<Modes>(static_cast<const T*>(run.input[Math::kOperands.inputs[I].slot]))...} {}

    // Math at elements [i, i + lanes), with kPrefetch its contiguous inputs asked ahead.
    template <bool kPrefetch>
    HWY_INLINE VF at(DF d, const Math& math, size_t i) const {
        if constexpr (kPrefetch) (prefetch<Modes>(base_[I], i), ...);
        return math.template apply<Modes...>(d, read<Modes>(d, base_[I], i, splat_[I])...);
    }

    // A staged Math's first and second steps at elements [i, i + lanes).
    template <bool kPrefetch>
    HWY_INLINE VF first_at(DF d, const Math& math, size_t i) const {
        if constexpr (kPrefetch) (prefetch<Modes>(base_[I], i), ...);
        return math.template first<Modes...>(d, read<Modes>(d, base_[I], i, splat_[I])...);
    }
    HWY_INLINE VF second_at(DF d, const Math& math, size_t i, VF kept) const {
        return math.template second<Modes...>(d, kept, read<Modes>(d, base_[I], i, splat_[I])...);
    }

    // Math at the last `rest` (fewer than a vector) elements from i on, copied into
    // zeroed vectors so that no load passes the end; the other lanes are garbage.
    HWY_INLINE VF tail_at(DF d, const Math& math, size_t i, size_t rest) const {
        HWY_ALIGN T tail[kCount][kMaxLanes] = {};
        (copy_tail<Modes>(tail[I], base_[I], i, rest), ...);
        return math.template apply<Modes...>(d, read<Modes>(d, tail[I], 0, splat_[I])...);
    }

private:
    template <OperandAccess Mode>
    static HWY_INLINE float splat_value(const T* p) {
        if constexpr (Mode == OperandAccess::kSplat)
            return load_one<Dtype>(p);
        else
            return 0.0f;
    }
    template <OperandAccess Mode>
    static HWY_INLINE VF read(DF d, const T* base, size_t i, float splat) {
        if constexpr (Mode == OperandAccess::kContiguous)
            return load<Dtype>(d, base + i);
        else if constexpr (Mode == OperandAccess::kSplat)
            return hn::Set(d, splat);
        else
            return hn::Zero(d);
    }
    template <OperandAccess Mode>
    static HWY_INLINE void prefetch(const T* base, size_t i) {
        if constexpr (Mode == OperandAccess::kContiguous)
            hwy::Prefetch(reinterpret_cast<const char*>(base + i) + kPrefetchBytes);
    }
    template <OperandAccess Mode>
    static HWY_INLINE void copy_tail(T* into, const T* base, size_t i, size_t rest) {
        if constexpr (Mode == OperandAccess::kContiguous) std::memcpy(into, base + i, rest * sizeof(T));
    }

    const T* base_[kCount];
    float splat_[kCount];
};

template <int32_t Dtype, class Math, class Modes>
using InputsOf = RunInputs<Dtype, Math, Modes, std::make_index_sequence<Math::kOperands.input_count>>;

// Calls body(AccessModes<...>{}) with the accesses of run's inputs, choosing among
// the ones Math takes (the driver never hands it others).
template <class Math, OperandAccess... Chosen, class Body>
HWY_INLINE void with_access_modes(const VectorRun& run, AccessModes<Chosen...> chosen, Body&& body) {
    constexpr size_t kNext = sizeof...(Chosen);
    if constexpr (kNext == static_cast<size_t>(Math::kOperands.input_count)) {
        body(chosen);
    } else {
        constexpr uint32_t kAccesses = Math::kOperands.inputs[kNext].vector_access;
        const OperandAccess access = run.access[Math::kOperands.inputs[kNext].slot];
        if constexpr (allows(kAccesses, OperandAccess::kContiguous)) {
            if (access == OperandAccess::kContiguous)
                return with_access_modes<Math>(run, AccessModes<Chosen..., OperandAccess::kContiguous>{},
                                               body);
        }
        if constexpr (allows(kAccesses, OperandAccess::kSplat)) {
            if (access == OperandAccess::kSplat)
                return with_access_modes<Math>(run, AccessModes<Chosen..., OperandAccess::kSplat>{}, body);
        }
        if constexpr (allows(kAccesses, OperandAccess::kAbsent)) {
            if (access == OperandAccess::kAbsent)
                return with_access_modes<Math>(run, AccessModes<Chosen..., OperandAccess::kAbsent>{}, body);
        }
        HWY_ABORT("input %d: access %d is not one the op's vector kernels take", static_cast<int>(kNext),
                  static_cast<int>(access));
    }
}

// Calls body(std::integral_constant<int32_t, dtype>{}).
template <class Body>
HWY_INLINE void with_dtype(int32_t dtype, Body&& body) {
    switch (dtype) {
        case NNPLUG_DTYPE_F16:
            return body(std::integral_constant<int32_t, NNPLUG_DTYPE_F16>{});
        case NNPLUG_DTYPE_BF16:
            return body(std::integral_constant<int32_t, NNPLUG_DTYPE_BF16>{});
        default:
            return body(std::integral_constant<int32_t, NNPLUG_DTYPE_F32>{});
    }
}

// Walks n elements a vector at a time: sink takes each result vector with its first
// element and how many of its lanes are real (fewer in the tail).
template <bool kPrefetch, class Inputs, class Math, class Sink>
HWY_INLINE void walk(const Inputs& inputs, const Math& math, size_t n, Sink&& sink) {
    const DF d;
    const size_t lanes = hn::Lanes(d);
    size_t i = 0;
    if constexpr (IsStaged<Math>::value) {
        HWY_ALIGN float kept[kStageBlock];
        const size_t block = kStageBlock / lanes * lanes;
        while (i + lanes <= n) {
            const size_t count = std::min(block, (n - i) / lanes * lanes);
            for (size_t j = 0; j < count; j += lanes)
                hn::Store(inputs.template first_at<kPrefetch>(d, math, i + j), d, kept + j);
            for (size_t j = 0; j < count; j += lanes)
                sink(inputs.second_at(d, math, i + j, hn::Load(d, kept + j)), i + j, lanes);
            i += count;
        }
    } else {
        for (; i + lanes <= n; i += lanes) sink(inputs.template at<kPrefetch>(d, math, i), i, lanes);
    }
    if (i < n) sink(inputs.tail_at(d, math, i, n - i), i, n - i);
}

// A sink writing the result to out; full vectors streamed when asked.
template <int32_t Dtype, bool kStream>
struct StoreSink {
    Raw<Dtype>* out;
    HWY_INLINE void operator()(VF v, size_t i, size_t count) const {
        const DF d;
        if (count == hn::Lanes(d)) {
            store<Dtype, kStream>(d, v, out + i);
            return;
        }
        HWY_ALIGN Raw<Dtype> lanes[kMaxLanes];
        store<Dtype, false>(d, v, lanes);
        std::memcpy(out + i, lanes, count * sizeof(Raw<Dtype>));
    }
};

// run.out = math over the run.
template <class Math>
HWY_INLINE void map_run(const VectorRun& run, const Math& math) {
    with_dtype(run.dtype, [&](auto dtype) {
        constexpr int32_t kDtype = decltype(dtype)::value;
        with_access_modes<Math>(run, AccessModes<>{}, [&](auto modes) {
            const InputsOf<kDtype, Math, decltype(modes)> inputs(run);
            const size_t n = static_cast<size_t>(run.length);
            auto* out = static_cast<Raw<kDtype>*>(run.out);
            if constexpr (can_stream<kDtype>()) {
                const size_t vector_bytes = hn::Lanes(DF()) * sizeof(Raw<kDtype>);
                if (run.stream_out && reinterpret_cast<uintptr_t>(out) % vector_bytes == 0) {
                    walk<Math::kPrefetch>(inputs, math, n, StoreSink<kDtype, true>{out});
                    return;
                }
            }
            walk<Math::kPrefetch>(inputs, math, n, StoreSink<kDtype, false>{out});
        });
    });
}

#if HWY_TARGET != HWY_SCALAR
// Float vectors summed in two double accumulators (the low and the high half).
struct DoubleSums {
    using DD = hn::Repartition<double, DF>;
    hn::Vec<DD> low, high;
    HWY_INLINE DoubleSums() : low(hn::Zero(DD())), high(hn::Zero(DD())) {}
    HWY_INLINE void add(VF v) {
        const hn::Half<DF> dh;
        low = hn::Add(low, hn::PromoteTo(DD(), hn::LowerHalf(dh, v)));
        high = hn::Add(high, hn::PromoteTo(DD(), hn::UpperHalf(dh, v)));
    }
    HWY_INLINE double total() const { return hn::GetLane(hn::SumOfLanes(DD(), hn::Add(low, high))); }
};

// sum_values' pairs of vectors for a staged Math, in the same order, over blocks of a
// whole number of pairs; returns where the pairs end.
template <class Inputs, class Math>
HWY_INLINE size_t sum_staged_pairs(const Inputs& inputs, const Math& math, size_t full, DoubleSums& sums) {
    const DF d;
    const size_t lanes = hn::Lanes(d);
    const size_t block = kStageBlock / (2 * lanes) * (2 * lanes);
    HWY_ALIGN float kept[kStageBlock];
    size_t i = 0;
    while (i + 2 * lanes <= full) {
        const size_t count = std::min(block, (full - i) / (2 * lanes) * (2 * lanes));
        for (size_t j = 0; j < count; j += lanes)
            hn::Store(inputs.template first_at<Math::kPrefetch>(d, math, i + j), d, kept + j);
        for (size_t j = 0; j < count; j += 2 * lanes) {
            const VF first = inputs.second_at(d, math, i + j, hn::Load(d, kept + j));
            const VF second = inputs.second_at(d, math, i + j + lanes, hn::Load(d, kept + j + lanes));
            sums.add(hn::Add(first, second));
        }
        i += count;
    }
    return i;
}
#endif

// Math over n elements summed in double lanes, in an order fixed by n alone. Its own
// loop rather than walk with a summing sink, so the accumulators stay in registers;
// two vectors per step, added in float32 (one rounding per pair of elements) before
// they are widened, which halves the conversions.
template <class Inputs, class Math>
HWY_INLINE double sum_values(const Inputs& inputs, const Math& math, size_t n) {
    const DF d;
    const size_t lanes = hn::Lanes(d);
    const size_t full = n / lanes * lanes;
#if HWY_TARGET == HWY_SCALAR
    double total = 0;
    for (size_t i = 0; i < full; ++i)
        total += static_cast<double>(hn::GetLane(inputs.template at<Math::kPrefetch>(d, math, i)));
    return total;
#else
    DoubleSums sums;
    size_t i = 0;
    if constexpr (IsStaged<Math>::value) {
        i = sum_staged_pairs(inputs, math, full, sums);
    } else {
        for (; i + 2 * lanes <= full; i += 2 * lanes) {
            const VF first = inputs.template at<Math::kPrefetch>(d, math, i);
            sums.add(hn::Add(first, inputs.template at<Math::kPrefetch>(d, math, i + lanes)));
        }
    }
    if (i < full) sums.add(inputs.template at<Math::kPrefetch>(d, math, i));
    if (const size_t rest = n - full; rest != 0)
        sums.add(hn::IfThenElseZero(hn::FirstN(d, rest), inputs.tail_at(d, math, full, rest)));
    return sums.total();
#endif
}

// math over the run summed in double.
template <class Math>
HWY_INLINE double sum_run(const VectorRun& run, const Math& math) {
    double total = 0;
    with_dtype(run.dtype, [&](auto dtype) {
        with_access_modes<Math>(run, AccessModes<>{}, [&](auto modes) {
            const InputsOf<decltype(dtype)::value, Math, decltype(modes)> inputs(run);
            total = sum_values(inputs, math, static_cast<size_t>(run.length));
        });
    });
    return total;
}

}  // namespace nnplug::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard
