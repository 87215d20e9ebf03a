// The op-agnostic driver on descriptors as the runtime builds them: in-place runs
// (contiguous, splat gradOutput, weight broadcast along rows, streamed output) and the
// general path (strided, mixed dtypes, 16-bit outputs), the backward bit for bit
// against the canonical expression; reductions by fixed chunks.
#include "elementwise.h"

#include <gtest/gtest.h>
#include <nnplug/dtype_convert.h>
#include <nnplug/ops/binary_cross_entropy_math.h>
#include <nnplug/plugin_support.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "binary_cross_entropy_simd.h"
#include "driver_call.h"

namespace {

using nnplug::cpu::ElementwiseCall;
using nnplug::test::Call;
using nnplug::test::random_storage;
using nnplug::test::rounded;
using nnplug::test::same_bits_or_both_nan;
using nnplug::test::Storage;

// Every element of a backward call against nnplug::bce_backward of its widened operands.
void expect_backward_exact(const Call& call, const Storage& grad, const Storage& self, const Storage& target,
                           const Storage* weight, const Storage& out) {
    const float scale = nnplug::sdk::scale(call.desc);
    for (int64_t i = 0; i < call.desc.numel; ++i) {
        const float g = grad.get(call.element(NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_GRAD_OUTPUT, i));
        const float s = self.get(call.element(NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_SELF, i));
        const float t = target.get(call.element(NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_TARGET, i));
        const float w = weight != nullptr
                            ? weight->get(call.element(NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_WEIGHT, i))
                            : 1.0f;
        const float expected = rounded(out.dtype, nnplug::bce_backward(g, w, s, t, scale));
        const float result = out.get(call.element(NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_OUT, i));
        ASSERT_TRUE(same_bits_or_both_nan(result, expected))
            << "element " << i << ": " << result << " vs " << expected;
    }
}

TEST(CpuTbbDriver, MeanScaleFromTheDescriptorEqualsTheCanonicalScale) {
    for (const int64_t n : {1, 3, 7, 1000, 65537, 100003, 1 << 26}) {
        Call call(NNPLUG_OP_BINARY_CROSS_ENTROPY_BACKWARD, {n}, NNPLUG_REDUCTION_MEAN,
                  NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_OPERANDS);
        EXPECT_EQ(nnplug::float_bits(nnplug::sdk::scale(call.desc)),
                  nnplug::float_bits(nnplug::bce_mean_scale(n)));
    }
}

TEST(CpuTbbDriver, ContiguousBackwardWithSplatGradientIsCanonical) {
    const int64_t n = 40000;
    Storage grad = random_storage(NNPLUG_DTYPE_F32, 1, -2, 2, 1);
    Storage self = random_storage(NNPLUG_DTYPE_F32, n, 0, 1, 2);
    Storage target = random_storage(NNPLUG_DTYPE_F32, n, 0, 1, 3);
    Storage weight = random_storage(NNPLUG_DTYPE_F32, n, 0, 2, 4), out(NNPLUG_DTYPE_F32, n);
    Call call(NNPLUG_OP_BINARY_CROSS_ENTROPY_BACKWARD, {n}, NNPLUG_REDUCTION_MEAN,
              NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_OPERANDS);
    call.operand(NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_GRAD_OUTPUT, grad, {0});
    call.operand(NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_SELF, self, {1});
    call.operand(NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_TARGET, target, {1});
    call.operand(NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_WEIGHT, weight, {1});
    call.operand(NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_OUT, out, {1}, NNPLUG_OPERAND_OUTPUT);
    call.run(nnplug::cpu::bce_backward_kernels(), 16384, true);
    expect_backward_exact(call, grad, self, target, &weight, out);
}

TEST(CpuTbbDriver, WeightBroadcastAlongRowsWithoutWeightOrInSixteenBitsIsCanonical) {
    for (const int32_t dtype : {NNPLUG_DTYPE_F32, NNPLUG_DTYPE_F16, NNPLUG_DTYPE_BF16}) {
        for (const bool weighted : {true, false}) {
            const int64_t rows = 301, columns = 37, n = rows * columns;
            Storage grad = random_storage(dtype, n, -2, 2, 5), self = random_storage(dtype, n, 0, 1, 6);
            Storage target = random_storage(dtype, n, 0, 1, 7);
            Storage weight = random_storage(dtype, columns, 0, 2, 8);
            Storage out(dtype, n);
            Call call(NNPLUG_OP_BINARY_CROSS_ENTROPY_BACKWARD, {rows, columns}, NNPLUG_REDUCTION_NONE,
                      NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_OPERANDS);
            call.operand(NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_GRAD_OUTPUT, grad, {columns, 1});
            call.operand(NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_SELF, self, {columns, 1});
            call.operand(NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_TARGET, target, {columns, 1});
            if (weighted) call.operand(NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_WEIGHT, weight, {0, 1});
            call.operand(NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_OUT, out, {columns, 1}, NNPLUG_OPERAND_OUTPUT);
            call.run(nnplug::cpu::bce_backward_kernels(), 1000, true);
            SCOPED_TRACE(nnplug_dtype_name(dtype));
            expect_backward_exact(call, grad, self, target, weighted ? &weight : nullptr, out);
        }
    }
}

TEST(CpuTbbDriver, StridedMixedDtypeBackwardTakesTheGeneralPathAndIsCanonical) {
    // self read every other element, target float16, weight bfloat16 broadcast along
    // rows, gradOutput one value, out float16 transposed: nothing is read in place.
    const int64_t rows = 129, columns = 2050, n = rows * columns;
    Storage grad = random_storage(NNPLUG_DTYPE_F32, 1, -2, 2, 9);
    Storage self = random_storage(NNPLUG_DTYPE_F32, 2 * n, 0, 1, 10);
    Storage target = random_storage(NNPLUG_DTYPE_F16, n, 0, 1, 11);
    Storage weight = random_storage(NNPLUG_DTYPE_BF16, columns, 0, 2, 12);
    Storage out(NNPLUG_DTYPE_F16, n);
    Call call(NNPLUG_OP_BINARY_CROSS_ENTROPY_BACKWARD, {rows, columns}, NNPLUG_REDUCTION_SUM,
              NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_OPERANDS);
    call.operand(NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_GRAD_OUTPUT, grad, {0, 0});
    call.operand(NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_SELF, self, {2 * columns, 2});
    call.operand(NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_TARGET, target, {columns, 1});
    call.operand(NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_WEIGHT, weight, {0, 1});
    call.operand(NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_OUT, out, {1, rows}, NNPLUG_OPERAND_OUTPUT);
    call.run(nnplug::cpu::bce_backward_kernels(), 16384, false);
    expect_backward_exact(call, grad, self, target, &weight, out);
}

TEST(CpuTbbDriver, LargeBackwardStreamsItsOutputAndIsCanonical) {
    const int64_t n = (int64_t{52} << 20) / 20 + 5;  // five float32 operands over 48 MiB
    Storage grad = random_storage(NNPLUG_DTYPE_F32, n, -2, 2, 13);
    Storage self = random_storage(NNPLUG_DTYPE_F32, n, 0, 1, 14);
    Storage target = random_storage(NNPLUG_DTYPE_F32, n, 0, 1, 15);
    Storage weight = random_storage(NNPLUG_DTYPE_F32, n, 0, 2, 16), out(NNPLUG_DTYPE_F32, n);
    Call call(NNPLUG_OP_BINARY_CROSS_ENTROPY_BACKWARD, {n}, NNPLUG_REDUCTION_NONE,
              NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_OPERANDS);
    call.operand(NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_GRAD_OUTPUT, grad, {1});
    call.operand(NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_SELF, self, {1});
    call.operand(NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_TARGET, target, {1});
    call.operand(NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_WEIGHT, weight, {1});
    call.operand(NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_OUT, out, {1}, NNPLUG_OPERAND_OUTPUT);
    call.run(nnplug::cpu::bce_backward_kernels(), 16384 * 7 + 3, true);  // ranges not a multiple of a vector
    expect_backward_exact(call, grad, self, target, &weight, out);
}

TEST(CpuTbbDriver, ScalarCallOfRankZero) {
    Storage grad(NNPLUG_DTYPE_BF16, 1), self(NNPLUG_DTYPE_F32, 1), target(NNPLUG_DTYPE_F16, 1);
    Storage out(NNPLUG_DTYPE_F32, 1);
    grad.set(0, 0.75f);
    self.set(0, 0.3f);
    target.set(0, 1.0f);
    Call call(NNPLUG_OP_BINARY_CROSS_ENTROPY_BACKWARD, {}, NNPLUG_REDUCTION_NONE,
              NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_OPERANDS);
    call.operand(NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_GRAD_OUTPUT, grad, {});
    call.operand(NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_SELF, self, {});
    call.operand(NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_TARGET, target, {});
    call.operand(NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_OUT, out, {}, NNPLUG_OPERAND_OUTPUT);
    call.run(nnplug::cpu::bce_backward_kernels(), 1, false);
    expect_backward_exact(call, grad, self, target, nullptr, out);
}

// The forward's mean over a call, by chunks in a given order of tasks.
float forward_mean(const Call& call, bool reversed, bool in_place) {
    const ElementwiseCall forward(nnplug::cpu::bce_forward_kernels(), call.desc);
    EXPECT_TRUE(forward.reduces());
    EXPECT_EQ(forward.reads_in_place(), in_place);
    std::vector<double> partials(static_cast<size_t>(forward.reduce_chunks()));
    for (size_t c = 0; c < partials.size(); ++c) {
        const size_t chunk = reversed ? partials.size() - 1 - c : c;
        partials[chunk] = forward.sum_chunk(static_cast<int64_t>(chunk));
    }
    forward.finish_reduction(partials.data(), static_cast<int64_t>(partials.size()));
    const nnplug_tensor& out = call.desc.operands[NNPLUG_BINARY_CROSS_ENTROPY_OUT];
    return nnplug::load_as_f32(out.data, out.dtype, 0);
}

TEST(CpuTbbDriver, ForwardMeanIsIndependentOfTheChunkOrderAndCloseToFloat64InPlaceAndStrided) {
    const int64_t n = 100003;
    Storage self = random_storage(NNPLUG_DTYPE_F32, 2 * n, 0.001f, 0.999f, 17);
    Storage target = random_storage(NNPLUG_DTYPE_F32, n, 0, 1, 18);
    Storage weight = random_storage(NNPLUG_DTYPE_F32, n, 0, 2, 19);
    Storage packed(NNPLUG_DTYPE_F32, n);  // self's even elements, contiguous
    for (int64_t i = 0; i < n; ++i) packed.set(i, self.get(2 * i));
    double expected = 0;
    for (int64_t i = 0; i < n; ++i) {
        const double s = packed.get(i), t = target.get(i);
        expected -= weight.get(i) * (t * std::log(s) + (1 - t) * std::log1p(-s));
    }
    expected /= static_cast<double>(n);
    Storage out(NNPLUG_DTYPE_F32, 1);
    Call in_place(NNPLUG_OP_BINARY_CROSS_ENTROPY, {n}, NNPLUG_REDUCTION_MEAN,
                  NNPLUG_BINARY_CROSS_ENTROPY_OPERANDS);
    in_place.operand(NNPLUG_BINARY_CROSS_ENTROPY_SELF, packed, {1});
    in_place.operand(NNPLUG_BINARY_CROSS_ENTROPY_TARGET, target, {1});
    in_place.operand(NNPLUG_BINARY_CROSS_ENTROPY_WEIGHT, weight, {1});
    in_place.operand(NNPLUG_BINARY_CROSS_ENTROPY_OUT, out, {0},
                     NNPLUG_OPERAND_OUTPUT | NNPLUG_OPERAND_REDUCED);
    Call strided = in_place;
    strided.operand(NNPLUG_BINARY_CROSS_ENTROPY_SELF, self, {2});
    EXPECT_GT(nnplug::cpu::workspace_bytes(nnplug::cpu::bce_forward_kernels(), in_place.desc), 0u);
    const float mean = forward_mean(in_place, false, true);
    EXPECT_NEAR(mean, expected, 1e-6 * std::abs(expected));
    // Chunks are fixed: the order tasks take them in changes nothing.
    EXPECT_EQ(nnplug::float_bits(forward_mean(in_place, true, true)), nnplug::float_bits(mean));
    EXPECT_NEAR(forward_mean(strided, false, false), expected, 1e-6 * std::abs(expected));
}

TEST(CpuTbbDriver, ForwardWithoutReductionIsTheSameInPlaceAndConverted) {
    // float16 operands read in place against the same values widened to float32 first.
    const int64_t n = 5000;
    Storage self = random_storage(NNPLUG_DTYPE_F16, n, 0.001f, 0.999f, 20);
    Storage target = random_storage(NNPLUG_DTYPE_F16, n, 0, 1, 21);
    Storage wide_self(NNPLUG_DTYPE_F32, n), wide_target(NNPLUG_DTYPE_F32, n);
    for (int64_t i = 0; i < n; ++i) {
        wide_self.set(i, self.get(i));
        wide_target.set(i, target.get(i));
    }
    Storage out(NNPLUG_DTYPE_F16, n), mixed_out(NNPLUG_DTYPE_F16, n);
    Call half(NNPLUG_OP_BINARY_CROSS_ENTROPY, {n}, NNPLUG_REDUCTION_NONE,
              NNPLUG_BINARY_CROSS_ENTROPY_OPERANDS);
    half.operand(NNPLUG_BINARY_CROSS_ENTROPY_SELF, self, {1});
    half.operand(NNPLUG_BINARY_CROSS_ENTROPY_TARGET, target, {1});
    half.operand(NNPLUG_BINARY_CROSS_ENTROPY_OUT, out, {1}, NNPLUG_OPERAND_OUTPUT);
    Call mixed = half;
    mixed.operand(NNPLUG_BINARY_CROSS_ENTROPY_SELF, wide_self, {1});
    mixed.operand(NNPLUG_BINARY_CROSS_ENTROPY_TARGET, wide_target, {1});
    mixed.operand(NNPLUG_BINARY_CROSS_ENTROPY_OUT, mixed_out, {1}, NNPLUG_OPERAND_OUTPUT);
    half.run(nnplug::cpu::bce_forward_kernels(), 1024, true);
    mixed.run(nnplug::cpu::bce_forward_kernels(), 999, false);
    EXPECT_EQ(std::memcmp(out.data(), mixed_out.data(), out.words.size() * 4), 0);
}

}  // namespace
