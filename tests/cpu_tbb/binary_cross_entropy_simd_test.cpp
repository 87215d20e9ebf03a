// The vector kernels against the scalar SDK: conversions bit for bit over every 16-bit
// value, the backward bit for bit, the forward within rtol 1e-5 of float64 (special
// values included) and its logs within 2 ulp, on each Highway target the CPU supports.
#include "binary_cross_entropy_simd.h"

#include <gtest/gtest.h>
#include <hwy/targets.h>
#include <nnplug/dtype_convert.h>
#include <nnplug/ops/binary_cross_entropy_math.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "dtype_convert_simd.h"
#include "simd_targets.h"

namespace {

using nnplug::test::for_each_target;

using nnplug::cpu::OperandAccess;
using nnplug::cpu::VectorRun;

bool same_bits_or_both_nan(float a, float b) {
    if (std::isnan(a) && std::isnan(b)) return true;
    return nnplug::float_bits(a) == nnplug::float_bits(b);
}

// Floats that exercise rounding: every 16-bit pattern shifted to each half of a float,
// halfway and near-halfway cases, subnormals, overflow, infinities and NaNs.
std::vector<float> rounding_probes() {
    std::vector<float> values;
    for (uint32_t high = 0; high < 0x10000u; ++high)
        for (const uint32_t low : {0x0000u, 0x0fffu, 0x1000u, 0x1001u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu})
            values.push_back(nnplug::bits_float(high << 16 | low));
    return values;
}

TEST(CpuTbbConversions, HalfAndBfloat16ToFloatMatchTheScalarSdkForAllValues) {
    std::vector<uint16_t> all(0x10000);
    for (uint32_t i = 0; i < 0x10000u; ++i) all[i] = static_cast<uint16_t>(i);
    for_each_target([&] {
        std::vector<float> widened(all.size());
        nnplug::simd::convert_to_f32(NNPLUG_DTYPE_F16, all.data(), widened.data(),
                                     static_cast<int64_t>(all.size()));
        for (uint32_t i = 0; i < 0x10000u; ++i)
            ASSERT_TRUE(same_bits_or_both_nan(widened[i], nnplug::f16_to_f32(static_cast<uint16_t>(i))))
                << "f16 " << i;
        nnplug::simd::convert_to_f32(NNPLUG_DTYPE_BF16, all.data(), widened.data(),
                                     static_cast<int64_t>(all.size()));
        for (uint32_t i = 0; i < 0x10000u; ++i)
            ASSERT_TRUE(same_bits_or_both_nan(widened[i], nnplug::bf16_to_f32(static_cast<uint16_t>(i))))
                << "bf16 " << i;
    });
}

TEST(CpuTbbConversions, FloatToHalfAndBfloat16RoundToNearestEvenLikeTheScalarSdk) {
    const std::vector<float> probes = rounding_probes();
    for_each_target([&] {
        std::vector<uint16_t> narrowed(probes.size());
        const int64_t count = static_cast<int64_t>(probes.size());
        nnplug::simd::convert_from_f32(NNPLUG_DTYPE_F16, probes.data(), narrowed.data(), count);
        for (size_t i = 0; i < probes.size(); ++i) {
            const uint16_t expected = nnplug::f32_to_f16(probes[i]);
            if (std::isnan(probes[i])) {
                ASSERT_TRUE((narrowed[i] & 0x7fffu) > 0x7c00u) << "f16 NaN " << i;
            } else {
                ASSERT_EQ(narrowed[i], expected)
                    << "f16 of bits " << std::hex << nnplug::float_bits(probes[i]);
            }
        }
        nnplug::simd::convert_from_f32(NNPLUG_DTYPE_BF16, probes.data(), narrowed.data(), count);
        for (size_t i = 0; i < probes.size(); ++i)
            ASSERT_EQ(narrowed[i], nnplug::f32_to_bf16(probes[i]))
                << "bf16 of bits " << std::hex << nnplug::float_bits(probes[i]);
    });
}

// Inputs in and out of the domain: random values plus every special value at a few positions.
struct Operands {
    std::vector<float> grad, self, target, weight;
};

Operands make_operands(size_t count) {
    std::mt19937 random(5);
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    Operands o;
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    const float specials[] = {0.0f, -0.0f, 1.0f, 1e-7f, 1.0f - 0x1p-24f, 1e-30f, 1e-40f, 1e-45f, -0.5f, 1.5f,
                              inf,  -inf,  nan,  0.5f,  0x1p-126f,       0.999f};
    for (size_t i = 0; i < count; ++i) {
        const bool special = i % 7 == 3;
        o.self.push_back(special ? specials[(i / 7) % std::size(specials)] : unit(random));
        o.target.push_back(i % 11 == 5 ? specials[(i / 11) % std::size(specials)] : unit(random));
        o.weight.push_back(i % 13 == 7 ? specials[(i / 13) % std::size(specials)] : 2.0f * unit(random));
        o.grad.push_back(i % 17 == 1 ? specials[(i / 17) % std::size(specials)] : 4.0f * unit(random) - 2.0f);
    }
    return o;
}

// A float32 backward run over the first count elements of o, at the op's slots.
VectorRun backward_run_over(const Operands& o, size_t count, OperandAccess grad, OperandAccess weight,
                            float* out) {
    VectorRun run;
    run.length = static_cast<int64_t>(count);
    run.input[NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_GRAD_OUTPUT] = o.grad.data();
    run.access[NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_GRAD_OUTPUT] = grad;
    run.input[NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_SELF] = o.self.data();
    run.access[NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_SELF] = OperandAccess::kContiguous;
    run.input[NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_TARGET] = o.target.data();
    run.access[NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_TARGET] = OperandAccess::kContiguous;
    run.input[NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_WEIGHT] = o.weight.data();
    run.access[NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_WEIGHT] = weight;
    run.out = out;
    return run;
}

// The same for the forward (out is unused by sums).
VectorRun forward_run_over(const Operands& o, size_t count, OperandAccess weight, float* out) {
    VectorRun run;
    run.length = static_cast<int64_t>(count);
    run.input[NNPLUG_BINARY_CROSS_ENTROPY_SELF] = o.self.data();
    run.access[NNPLUG_BINARY_CROSS_ENTROPY_SELF] = OperandAccess::kContiguous;
    run.input[NNPLUG_BINARY_CROSS_ENTROPY_TARGET] = o.target.data();
    run.access[NNPLUG_BINARY_CROSS_ENTROPY_TARGET] = OperandAccess::kContiguous;
    run.input[NNPLUG_BINARY_CROSS_ENTROPY_WEIGHT] = o.weight.data();
    run.access[NNPLUG_BINARY_CROSS_ENTROPY_WEIGHT] = weight;
    run.out = out;
    return run;
}

void backward(const VectorRun& run, float scale) {
    nnplug::cpu::bce_backward_kernels().map(run, scale);
}
void forward(const VectorRun& run) {
    nnplug::cpu::bce_forward_kernels().map(run, 1.0f);
}
double forward_sum(const VectorRun& run) {
    return nnplug::cpu::bce_forward_kernels().sum(run);
}

TEST(CpuTbbKernels, BackwardEqualsTheCanonicalExpressionBitForBit) {
    const Operands o = make_operands(1000);
    for_each_target([&] {
        for (const OperandAccess grad : {OperandAccess::kContiguous, OperandAccess::kSplat})
            for (const OperandAccess weight :
                 {OperandAccess::kAbsent, OperandAccess::kSplat, OperandAccess::kContiguous})
                for (const size_t count : {size_t{1}, size_t{15}, size_t{17}, size_t{1000}})
                    for (const float scale : {1.0f, nnplug::bce_mean_scale(static_cast<int64_t>(count))}) {
                        std::vector<float> out(count, -7.0f);
                        backward(backward_run_over(o, count, grad, weight, out.data()), scale);
                        for (size_t i = 0; i < count; ++i) {
                            const float g = o.grad[grad == OperandAccess::kSplat ? 0 : i];
                            const float w = weight == OperandAccess::kAbsent
                                                ? 1.0f
                                                : o.weight[weight == OperandAccess::kSplat ? 0 : i];
                            const float expected = nnplug::bce_backward(g, w, o.self[i], o.target[i], scale);
                            ASSERT_TRUE(same_bits_or_both_nan(out[i], expected))
                                << "element " << i << " of " << count << ": " << out[i] << " vs " << expected;
                        }
                    }
    });
}

double forward_reference(double weight, double self, double target) {
    const double log_self = std::max(std::log(self), -100.0);
    const double log_rest = std::max(std::log1p(-self), -100.0);
    if (std::isnan(std::log(self)) || std::isnan(std::log1p(-self))) return std::nan("");
    return -weight * (target * log_self + (1.0 - target) * log_rest);
}

void expect_forward_close(float result, double expected, const std::string& where) {
    if (std::isnan(expected)) {
        EXPECT_TRUE(std::isnan(result)) << where << ": got " << result;
    } else if (std::isinf(expected)) {
        EXPECT_EQ(result, expected) << where;
    } else {
        EXPECT_NEAR(result, expected, 1e-5 * std::abs(expected) + 1e-37) << where;
    }
}

TEST(CpuTbbKernels, ForwardIsWithinRtol1e5OfFloat64WithSpecialValues) {
    const Operands o = make_operands(1000);
    for_each_target([&] {
        for (const OperandAccess weight : {OperandAccess::kAbsent, OperandAccess::kContiguous}) {
            std::vector<float> out(o.self.size(), -7.0f);
            forward(forward_run_over(o, o.self.size(), weight, out.data()));
            double sum = 0;
            bool sum_is_nan = false;
            for (size_t i = 0; i < out.size(); ++i) {
                const double expected = forward_reference(
                    weight == OperandAccess::kAbsent ? 1.0 : o.weight[i], o.self[i], o.target[i]);
                expect_forward_close(out[i], expected, "element " + std::to_string(i));
                sum += expected;
                sum_is_nan = sum_is_nan || std::isnan(expected);
            }
            const double total = forward_sum(forward_run_over(o, o.self.size(), weight, nullptr));
            if (sum_is_nan) {
                EXPECT_TRUE(std::isnan(total));
            } else if (std::isinf(sum)) {
                EXPECT_EQ(total, sum);
            } else {
                EXPECT_NEAR(total, sum, 1e-5 * std::abs(sum));
            }
        }
    });
}

// The forward loss of contiguous self and target with no weight, on the current target.
std::vector<float> unweighted_forward(const std::vector<float>& self, const std::vector<float>& target) {
    std::vector<float> out(self.size());
    VectorRun run;
    run.length = static_cast<int64_t>(self.size());
    run.input[NNPLUG_BINARY_CROSS_ENTROPY_SELF] = self.data();
    run.access[NNPLUG_BINARY_CROSS_ENTROPY_SELF] = OperandAccess::kContiguous;
    run.input[NNPLUG_BINARY_CROSS_ENTROPY_TARGET] = target.data();
    run.access[NNPLUG_BINARY_CROSS_ENTROPY_TARGET] = OperandAccess::kContiguous;
    run.out = out.data();
    forward(run);
    return out;
}

TEST(CpuTbbKernels, ForwardLogIsAccurateAcrossTheWholeRangeOfSelf) {
    // Every 97th float in [2^-149, 1): the logs of self and of 1 - self over all exponents.
    std::vector<float> self;
    for (uint32_t bits = 1; bits < 0x3f800000u; bits += 97) self.push_back(nnplug::bits_float(bits));
    const std::vector<float> target(self.size(), 0.25f);
    for_each_target([&] {
        const std::vector<float> out = unweighted_forward(self, target);
        int failures = 0;
        for (size_t i = 0; i < self.size() && failures < 10; ++i) {
            const double expected = forward_reference(1.0, self[i], 0.25);
            if (std::abs(out[i] - expected) > 1e-5 * std::abs(expected) + 1e-37) {
                ++failures;
                ADD_FAILURE() << "self " << self[i] << ": " << out[i] << " vs " << expected;
            }
        }
    });
}

TEST(CpuTbbKernels, ForwardLogsAreWithinTwoUlpOnEveryTarget) {
    // target 1 leaves -ln(self), target 0 leaves -ln(1 - self): each within 2 float32 ulp
    // of float64 for every 127th float in [2^-149, 1), the log clamp included.
    std::vector<float> self;
    for (uint32_t bits = 1; bits < 0x3f800000u; bits += 127) self.push_back(nnplug::bits_float(bits));
    for (const float target_value : {1.0f, 0.0f}) {
        const std::vector<float> target(self.size(), target_value);
        for_each_target([&] {
            const std::vector<float> out = unweighted_forward(self, target);
            int failures = 0;
            for (size_t i = 0; i < self.size() && failures < 10; ++i) {
                const double expected = forward_reference(1.0, self[i], target_value);
                if (expected == 0.0) continue;
                const double ulp = std::ldexp(1.0, std::ilogb(expected) - 23);
                if (std::abs(out[i] - expected) > 2.0 * ulp) {
                    ++failures;
                    ADD_FAILURE() << "target " << target_value << ", self " << self[i] << ": " << out[i]
                                  << " vs " << expected << " (" << std::abs(out[i] - expected) / ulp
                                  << " ulp)";
                }
            }
        });
    }
}

TEST(CpuTbbKernels, ForwardSumMatchesFloat64) {
    const size_t count = 100003;
    std::mt19937 random(9);
    std::uniform_real_distribution<float> unit(0.001f, 0.999f);
    Operands o;
    for (size_t i = 0; i < count; ++i) {
        o.self.push_back(unit(random));
        o.target.push_back(unit(random));
        o.weight.push_back(unit(random));
    }
    double expected = 0;
    for (size_t i = 0; i < count; ++i) expected += forward_reference(o.weight[i], o.self[i], o.target[i]);
    for_each_target([&] {
        const double total = forward_sum(forward_run_over(o, count, OperandAccess::kContiguous, nullptr));
        EXPECT_NEAR(total, expected, 1e-6 * std::abs(expected));
    });
}

TEST(CpuTbbKernels, SixteenBitRunsConvertWhileComputing) {
    // A float16 and a bfloat16 run equal the float32 kernel on widened inputs, rounded once.
    const Operands o = make_operands(333);
    for (const int32_t dtype : {int32_t{NNPLUG_DTYPE_F16}, int32_t{NNPLUG_DTYPE_BF16}}) {
        std::vector<uint16_t> g(333), s(333), t(333), w(333), out(333);
        Operands widened;
        for (size_t i = 0; i < 333; ++i) {
            const auto narrow = [&](float v) {
                return dtype == NNPLUG_DTYPE_F16 ? nnplug::f32_to_f16(v) : nnplug::f32_to_bf16(v);
            };
            g[i] = narrow(o.grad[i]);
            s[i] = narrow(o.self[i]);
            t[i] = narrow(o.target[i]);
            w[i] = narrow(o.weight[i]);
            widened.grad.push_back(nnplug::load_as_f32(g.data(), dtype, static_cast<int64_t>(i)));
            widened.self.push_back(nnplug::load_as_f32(s.data(), dtype, static_cast<int64_t>(i)));
            widened.target.push_back(nnplug::load_as_f32(t.data(), dtype, static_cast<int64_t>(i)));
            widened.weight.push_back(nnplug::load_as_f32(w.data(), dtype, static_cast<int64_t>(i)));
        }
        for_each_target([&] {
            VectorRun run;
            run.dtype = dtype;
            run.length = 333;
            const std::pair<int, const void*> inputs[] = {
                {NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_GRAD_OUTPUT, g.data()},
                {NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_SELF, s.data()},
                {NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_TARGET, t.data()},
                {NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_WEIGHT, w.data()}};
            for (const auto& [slot, data] : inputs) {
                run.input[slot] = data;
                run.access[slot] = OperandAccess::kContiguous;
            }
            run.out = out.data();
            backward(run, 1.0f);
            for (size_t i = 0; i < 333; ++i) {
                const float expected = nnplug::bce_backward(widened.grad[i], widened.weight[i],
                                                            widened.self[i], widened.target[i], 1.0f);
                const uint16_t bits =
                    dtype == NNPLUG_DTYPE_F16 ? nnplug::f32_to_f16(expected) : nnplug::f32_to_bf16(expected);
                if (std::isnan(expected)) {
                    ASSERT_TRUE(std::isnan(nnplug::load_as_f32(out.data(), dtype, static_cast<int64_t>(i))));
                } else {
                    ASSERT_EQ(out[i], bits) << nnplug_dtype_name(dtype) << " element " << i;
                }
            }
        });
    }
}

}  // namespace
