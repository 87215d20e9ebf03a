// The vector math of the binary cross-entropy on logits
// (backends/common/binary_cross_entropy_with_logits-inl.h) on each Highway target the CPU supports: its exp
// within 1 ulp over a dense sweep; the loss's own exp(-|x|) and ln on [1, 2] within their measured bounds;
// the loss and both gradients equal to the canonical expressions evaluated with the vector exp / log pieces
// bit for bit (the same operations in the same order), and within a few ulp of the canonical libm
// expressions; the SPEC's edge values exactly; 16-bit inputs; and cpu_tbb's driver on descriptors: posWeight
// [C] against [N, C], weight rounded to the promoted dtype, reductions.
#include "binary_cross_entropy_with_logits_simd.h"

#include <gtest/gtest.h>
#include <hwy/targets.h>
#include <nnplug/dtype_convert.h>
#include <nnplug/ops/binary_cross_entropy_with_logits_math.h>
#include <nnplug/plugin_support.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "binary_cross_entropy_with_logits_tile.h"
#include "driver_call.h"
#include "simd_targets.h"

namespace {

using nnplug::test::for_each_target;

using nnplug::cpu::OperandAccess;
using nnplug::cpu::VectorRun;
using nnplug::test::Call;
using nnplug::test::rounded;
using nnplug::test::same_bits_or_both_nan;
using nnplug::test::Storage;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kLn2 = 0.6931472f;

// Distance in representable floats (0 and -0 are one apart; NaN is handled by the callers).
int64_t ulp_distance(float a, float b) {
    const auto ordered = [](float v) {
        const int64_t bits = nnplug::float_bits(v);
        return bits & 0x80000000 ? -(bits & 0x7fffffff) - 1 : bits;
    };
    return std::abs(ordered(a) - ordered(b));
}

// |v - exact| in units of the float spacing at exact (subnormal spacing below 2^-126).
double ulp_error(float v, double exact) {
    const float rounded_exact = static_cast<float>(exact);
    if (std::isinf(rounded_exact) || std::isinf(v)) return v == rounded_exact ? 0.0 : 1e30;
    const int exponent = exact == 0.0 ? -126 : std::max(std::ilogb(exact), -126);
    return std::abs(static_cast<double>(v) - exact) / std::ldexp(1.0, exponent - 23);
}

std::vector<float> map(void (*tile)(const float*, float*, int64_t), const std::vector<float>& x) {
    std::vector<float> out(x.size());
    tile(x.data(), out.data(), static_cast<int64_t>(x.size()));
    return out;
}

// Every `step`th float from first up to last (both of one sign).
void add_floats(std::vector<float>& into, float first, float last, uint32_t step) {
    const uint32_t a = nnplug::float_bits(first), b = nnplug::float_bits(last);
    for (uint32_t bits = std::min(a, b); bits <= std::max(a, b); bits += step)
        into.push_back(nnplug::bits_float(bits));
}

// --- exp -------------------------------------------------------------------------

TEST(BceWithLogitsVectorMath, ExpIsWithinOneUlpOverADenseSweep) {
    std::vector<float> x;
    add_floats(x, 0.0f, 89.0f, 997);     // every 997th float of [0, 89]
    add_floats(x, -0.0f, -104.0f, 997);  // and of [-104, 0]
    add_floats(x, 0.34f, 0.36f, 1);      // every float around ln(2) / 2, where n steps
    add_floats(x, -0.34f, -0.36f, 1);
    add_floats(x, 88.0f, 89.0f, 1);     // every float around the overflow
    add_floats(x, -87.0f, -104.0f, 7);  // and through the subnormal results
    for_each_target([&](const char* name) {
        const std::vector<float> out = map(nnplug::simd::exp_tile, x);
        double worst = 0;
        int64_t worst_distance = 0;
        float worst_x = 0;
        for (size_t i = 0; i < x.size(); ++i) {
            const double exact = std::exp(static_cast<double>(x[i]));
            const double error = ulp_error(out[i], exact);
            const int64_t distance = ulp_distance(out[i], static_cast<float>(exact));
            if (error > worst) worst = error, worst_x = x[i];
            worst_distance = std::max(worst_distance, distance);
            ASSERT_LE(distance, 1) << "exp(" << x[i] << ") = " << out[i] << ", exactly " << exact;
        }
        std::printf(
            "[ %s ] vector exp over %zu floats: max error %.3f ulp (at %g), max %lld ulp from the "
            "rounded exact value\n",
            name, x.size(), worst, worst_x, static_cast<long long>(worst_distance));
        EXPECT_LT(worst, 1.0);
    });
}

TEST(BceWithLogitsVectorMath, ExpSpecialCases) {
    const float max_finite = 88.72283172607421875f;  // the last float whose exp is finite
    const std::vector<float> x = {
        0.0f,    -0.0f,   kInf,   -kInf,  kNan,  max_finite, std::nextafter(max_finite, kInf), 100.0f, 3e38f,
        -103.9f, -104.0f, -3e38f, -87.0f, 1e-8f, -1e-8f};
    for_each_target([&](const char*) {
        const std::vector<float> out = map(nnplug::simd::exp_tile, x);
        EXPECT_EQ(out[0], 1.0f);
        EXPECT_EQ(out[1], 1.0f);
        EXPECT_EQ(out[2], kInf);
        EXPECT_EQ(nnplug::float_bits(out[3]), 0u);
        EXPECT_TRUE(std::isnan(out[4]));
        EXPECT_TRUE(std::isfinite(out[5]) && out[5] > 3.4e38f) << out[5];
        EXPECT_EQ(out[6], kInf);
        EXPECT_EQ(out[7], kInf);
        EXPECT_EQ(out[8], kInf);
        EXPECT_GT(out[9], 0.0f);  // a subnormal
        EXPECT_EQ(nnplug::float_bits(out[10]), 0u);
        EXPECT_EQ(nnplug::float_bits(out[11]), 0u);
        EXPECT_EQ(out[12], expf(-87.0f));
        EXPECT_EQ(out[13], 1.0f);
        EXPECT_EQ(out[14], 1.0f);
    });
}

// The loss's own exp(-|x|): only 1 + e rounded to float32 uses it, so besides its ulps it
// must be within 2^-24 of exp(-|x|) absolutely (then 1 + e is at most one float from
// 1 + exp(-|x|) rounded, as with libm's expf), and below 2^-24 beyond 24 ln 2 = 16.64, so
// that 1 + e rounds to 1 there as with expf.
TEST(BceWithLogitsVectorMath, LossExpIsWithinFewUlpAndLeavesOnePlusItAsLibmDoes) {
    std::vector<float> x;
    add_floats(x, 0.0f, 20.0f, 97);     // every 97th float of [0, 20]
    add_floats(x, -0.0f, -20.0f, 101);  // and of [-20, 0]
    add_floats(x, 0.34f, 0.36f, 1);     // every float where n steps from 0 to -1
    add_floats(x, 1.03f, 1.05f, 1);     // and from -1 to -2
    add_floats(x, 16.5f, 16.8f, 1);     // every float around 24 ln 2
    add_floats(x, 19.9f, 1e30f, 9973);  // through the clamp at 20 and far beyond
    x.push_back(kInf);
    x.push_back(-kInf);
    x.push_back(std::numeric_limits<float>::max());
    x.push_back(1e-45f);
    for_each_target([&](const char* name) {
        const std::vector<float> out = map(nnplug::simd::exp_minus_abs_tile, x);
        double worst_ulp = 0, worst_ulp_to_8 = 0, worst_absolute = 0;
        float worst_x = 0;
        for (size_t i = 0; i < x.size(); ++i) {
            const double exact = std::exp(-std::fabs(static_cast<double>(x[i])));
            if (std::fabs(x[i]) > 16.7f) {  // exp(-16.7) < 0.94 * 2^-24
                ASSERT_EQ(1.0f + out[i], 1.0f) << "1 + exp(-|" << x[i] << "|)";
            }
            if (std::fabs(x[i]) > 20.0f) continue;  // clamped: exp(-20)
            const double error = ulp_error(out[i], exact);
            if (error > worst_ulp) worst_ulp = error, worst_x = x[i];
            if (std::fabs(x[i]) <= 8.0f) worst_ulp_to_8 = std::max(worst_ulp_to_8, error);
            worst_absolute = std::max(worst_absolute, std::abs(out[i] - exact) * 0x1p24);
            ASSERT_LE(ulp_distance(out[i], static_cast<float>(exact)), 2)
                << "exp(-|" << x[i] << "|) = " << out[i];
        }
        std::printf(
            "[ %s ] loss exp(-|x|) over %zu floats: max error %.3f ulp (at %g; %.3f up to |x| = 8), "
            "%.3f x 2^-24 absolute\n",
            name, x.size(), worst_ulp, worst_x, worst_ulp_to_8, worst_absolute);
        EXPECT_LT(worst_ulp, 1.5);
        EXPECT_LT(worst_ulp_to_8, 1.0);
        EXPECT_LT(worst_absolute, 1.0);
        EXPECT_EQ(out[0], 1.0f);  // exp(-0)
    });
}

// The loss's ln(u) on every float of [1, 2]. Its worst errors are just above 1 + 1/32,
// where ln(c) of part 1 and log1p(r) < 0 cancel one bit (results in [0.0308, 0.03125)).
TEST(BceWithLogitsVectorMath, LossLogIsWithinTwoUlpOnEveryFloatFromOneToTwo) {
    std::vector<float> u;
    add_floats(u, 1.0f, 2.0f, 1);
    for_each_target([&](const char* name) {
        const std::vector<float> out = map(nnplug::simd::log_one_to_two_tile, u);
        double worst = 0;
        float worst_u = 0;
        int64_t worst_distance = 0;
        for (size_t i = 0; i < u.size(); ++i) {
            const double exact = std::log(static_cast<double>(u[i]));
            const double error = exact == 0.0 ? (out[i] == 0.0f ? 0.0 : 1e30) : ulp_error(out[i], exact);
            if (error > worst) worst = error, worst_u = u[i];
            worst_distance = std::max(worst_distance, ulp_distance(out[i], static_cast<float>(exact)));
        }
        std::printf(
            "[ %s ] loss ln(u) on the %zu floats of [1, 2]: max error %.3f ulp (at %.9g), max %lld ulp from "
            "the rounded exact value\n",
            name, u.size(), worst, worst_u, static_cast<long long>(worst_distance));
        EXPECT_LT(worst, 2.0);
        EXPECT_LE(worst_distance, 2);
        EXPECT_EQ(out.front(), 0.0f);
        EXPECT_EQ(out.back(), kLn2);
    });
}

// The pieces against the libm expressions of the canonical header: measured bounds.
TEST(BceWithLogitsVectorMath, SigmoidSoftplusAndLog1pExpAreWithinFewUlpOfLibm) {
    std::vector<float> x;
    add_floats(x, 0.0f, 120.0f, 499);
    add_floats(x, -0.0f, -120.0f, 499);
    struct Piece {
        const char* name;
        void (*tile)(const float*, float*, int64_t);
        std::function<float(float)> canonical;
        int64_t bound;
        bool absolute;  // measured in units of 2^-24 rather than in ulp of the result
    };
    const Piece pieces[] = {
        // 1 + exp(-x) rounds to even at each 2 ulp above 2^24: a one-ulp exp can move it by 2.
        {"sigmoid", nnplug::simd::sigmoid_tile, [](float v) { return nnplug::bce_sigmoid(v); }, 4, false},
        // log(1 + e) inherits 1 + e's rounding (2^-24 absolute) in both expressions.
        {"log(1 + exp(-|x|))", nnplug::simd::softplus_part_tile,
         [](float v) { return nnplug::softplus_parts(v).sp; }, 3, true},
        {"log1p(exp(-|x|))", nnplug::simd::log1p_exp_tile, [](float v) { return log1pf(expf(-fabsf(v))); }, 3,
         false},
    };
    for_each_target([&](const char* name) {
        for (const Piece& piece : pieces) {
            const std::vector<float> out = map(piece.tile, x);
            double worst = 0;
            float worst_x = 0;
            for (size_t i = 0; i < x.size(); ++i) {
                const float canonical = piece.canonical(x[i]);
                const double distance = piece.absolute
                                            ? std::abs(static_cast<double>(out[i]) - canonical) * 0x1p24
                                            : static_cast<double>(ulp_distance(out[i], canonical));
                if (distance > worst) worst = distance, worst_x = x[i];
            }
            std::printf("[ %s ] %s: max %.2f %s from libm (at %g)\n", name, piece.name, worst,
                        piece.absolute ? "x 2^-24" : "ulp", worst_x);
            EXPECT_LE(worst, piece.bound) << piece.name << " at " << worst_x;
        }
    });
}

// --- the ops ---------------------------------------------------------------------

// Operands of one comparison: logits over the whole range with every special value,
// targets in [0, 1] (a few outside), positive weights and posWeights.
struct Operands {
    std::vector<float> grad, self, target, weight, pos_weight;
    size_t size() const { return self.size(); }
};

Operands make_operands(size_t count, unsigned seed) {
    std::mt19937 random(seed);
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    std::uniform_real_distribution<float> logit(-20.0f, 20.0f);
    const float specials[] = {0.0f,   -0.0f,  kInf,   -kInf, kNan,   100.0f, -100.0f, 88.8f,
                              -88.8f, 1e-30f, -1e-8f, 17.0f, -17.0f, 3e38f,  -3e38f,  1e-45f,
                              0.5f,   -103.f, 200.f,  -0.7f, -kNan};  // a NaN with the sign bit set
    Operands o;
    for (size_t i = 0; i < count; ++i) {
        float x = i % 5 == 0 ? logit(random) * 5.0f : logit(random);
        if (i % 7 == 3) x = specials[(i / 7) % std::size(specials)];
        o.self.push_back(x);
        o.target.push_back(i % 29 == 11 ? specials[(i / 29) % std::size(specials)]
                                        : (i % 3 == 0 ? std::round(unit(random)) : unit(random)));
        o.weight.push_back(i % 31 == 7 ? specials[(i / 31) % std::size(specials)] : 2.0f * unit(random));
        o.pos_weight.push_back(i % 37 == 5 ? specials[(i / 37) % std::size(specials)] : 4.0f * unit(random));
        o.grad.push_back(i % 41 == 1 ? specials[(i / 41) % std::size(specials)] : 4.0f * unit(random) - 2.0f);
    }
    return o;
}

// The canonical expressions with the vector pieces in place of expf / logf / log1pf:
// what the vector code must give bit for bit.
struct Pieces {
    std::vector<float> sp, s, tail;  // log(1 + exp(-|x|)), sigmoid(x), log1p(exp(-|x|))
};

Pieces vector_pieces(const std::vector<float>& x) {
    return {map(nnplug::simd::softplus_part_tile, x), map(nnplug::simd::sigmoid_tile, x),
            map(nnplug::simd::log1p_exp_tile, x)};
}

float forward_with(float sp, float x, float y, float w, float p, bool weighted, bool positive) {
    const float m = nnplug::clamp_below(-x, 0.0f);
    const float loss =
        positive ? (1.0f - y) * x + ((p - 1.0f) * y + 1.0f) * (sp + m) : (((1.0f - y) * x + m) + sp);
    return weighted ? loss * w : loss;
}

float backward_with(float s, float g, float y, float w, float p, float scale, bool weighted, bool positive) {
    const float t = p * y;
    float r = positive ? (((t + 1.0f) - y) * s - t) : s - y;
    r = r * g;
    if (weighted) r = r * w;
    return r * scale;
}

float target_backward_with(float tail, float g, float x, float w, float p, float scale, bool weighted,
                           bool positive) {
    const auto log_sigmoid = [tail](float z) { return (z > 0.0f ? 0.0f : z) - tail; };
    float r = positive ? log_sigmoid(-x) - p * log_sigmoid(x) : -x;
    r = r * g;
    if (weighted) r = r * w;
    return r * scale;
}

enum class Op { kForward, kBackward, kTargetBackward };

// The op over o through the atlas_emu tile (tile) or cpu_tbb's kernels (map) with the given accesses.
std::vector<float> run_tile(Op op, const Operands& o, bool weighted, bool positive, float scale) {
    std::vector<float> out(o.size(), -7.0f);
    const float* w = weighted ? o.weight.data() : nullptr;
    const float* p = positive ? o.pos_weight.data() : nullptr;
    const int64_t n = static_cast<int64_t>(o.size());
    if (op == Op::kForward)
        nnplug::simd::logits_forward_tile(o.self.data(), o.target.data(), w, p, out.data(), n);
    if (op == Op::kBackward)
        nnplug::simd::logits_backward_tile(o.grad.data(), o.self.data(), o.target.data(), w, p, scale,
                                           out.data(), n);
    if (op == Op::kTargetBackward)
        nnplug::simd::logits_target_backward_tile(o.grad.data(), o.self.data(), w, p, scale, out.data(), n);
    return out;
}

const nnplug::cpu::VectorKernels& kernels_of(Op op) {
    if (op == Op::kForward) return nnplug::cpu::bce_with_logits_kernels();
    if (op == Op::kBackward) return nnplug::cpu::bce_with_logits_backward_kernels();
    return nnplug::cpu::bce_with_logits_target_backward_kernels();
}

VectorRun run_over(Op op, const Operands& o, OperandAccess grad, OperandAccess weight,
                   OperandAccess pos_weight, float* out) {
    VectorRun run;
    run.length = static_cast<int64_t>(o.size());
    run.out = out;
    const auto set = [&](int slot, const std::vector<float>& values, OperandAccess access) {
        run.input[slot] = values.data();
        run.access[slot] = access;
    };
    if (op == Op::kForward) {
        set(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_SELF, o.self, OperandAccess::kContiguous);
        set(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_TARGET, o.target, OperandAccess::kContiguous);
        set(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_WEIGHT, o.weight, weight);
        set(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_POS_WEIGHT, o.pos_weight, pos_weight);
    } else {
        set(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_GRAD_OUTPUT, o.grad, grad);
        set(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_SELF, o.self, OperandAccess::kContiguous);
        set(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_TARGET, o.target, OperandAccess::kContiguous);
        set(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_WEIGHT, o.weight, weight);
        set(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_POS_WEIGHT, o.pos_weight, pos_weight);
    }
    return run;
}

constexpr OperandAccess kAccesses[] = {OperandAccess::kAbsent, OperandAccess::kSplat,
                                       OperandAccess::kContiguous};

// Element i of the op with the vector pieces, each input at its access.
float expected_with_pieces(Op op, const Operands& o, const Pieces& pieces, size_t i, OperandAccess grad,
                           OperandAccess weight, OperandAccess pos_weight, float scale) {
    const auto at = [i](const std::vector<float>& v, OperandAccess access) {
        return access == OperandAccess::kSplat ? v[0] : access == OperandAccess::kContiguous ? v[i] : 0.0f;
    };
    const bool weighted = weight != OperandAccess::kAbsent, positive = pos_weight != OperandAccess::kAbsent;
    const float w = at(o.weight, weight), p = at(o.pos_weight, pos_weight), g = at(o.grad, grad);
    if (op == Op::kForward)
        return forward_with(pieces.sp[i], o.self[i], o.target[i], w, p, weighted, positive);
    if (op == Op::kBackward)
        return backward_with(pieces.s[i], g, o.target[i], w, p, scale, weighted, positive);
    return target_backward_with(pieces.tail[i], g, o.self[i], w, p, scale, weighted, positive);
}

TEST(BceWithLogitsVectorMath, OpsAreTheCanonicalOperationsOnTheVectorPiecesBitForBit) {
    const Operands o = make_operands(1003, 3);
    for_each_target([&](const char*) {
        const Pieces pieces = vector_pieces(o.self);
        for (const Op op : {Op::kForward, Op::kBackward, Op::kTargetBackward})
            for (const OperandAccess weight : kAccesses)
                for (const OperandAccess pos_weight : kAccesses)
                    for (const OperandAccess grad : {OperandAccess::kContiguous, OperandAccess::kSplat}) {
                        if (op == Op::kForward && grad == OperandAccess::kSplat) continue;
                        const float scale = op == Op::kForward ? 1.0f : nnplug::bce_mean_scale(1003);
                        std::vector<float> out(o.size(), -7.0f);
                        kernels_of(op).map(run_over(op, o, grad, weight, pos_weight, out.data()), scale);
                        std::vector<float> tile;
                        const bool tile_case = grad == OperandAccess::kContiguous &&
                                               weight != OperandAccess::kSplat &&
                                               pos_weight != OperandAccess::kSplat;
                        if (tile_case)
                            tile = run_tile(op, o, weight != OperandAccess::kAbsent,
                                            pos_weight != OperandAccess::kAbsent, scale);
                        for (size_t i = 0; i < o.size(); ++i) {
                            const float expected =
                                expected_with_pieces(op, o, pieces, i, grad, weight, pos_weight, scale);
                            // NaN as the one quiet NaN, whatever the inputs' NaNs and accesses.
                            if (std::isnan(expected)) {
                                ASSERT_EQ(nnplug::float_bits(out[i]), 0x7fc00000u) << "element " << i;
                            }
                            ASSERT_TRUE(same_bits_or_both_nan(out[i], expected))
                                << "op " << static_cast<int>(op) << " weight " << static_cast<int>(weight)
                                << " posWeight " << static_cast<int>(pos_weight) << " grad "
                                << static_cast<int>(grad) << " element " << i << " (x = " << o.self[i]
                                << "): " << out[i] << " vs " << expected;
                            if (tile_case) {
                                ASSERT_EQ(nnplug::float_bits(tile[i]), nnplug::float_bits(out[i]))
                                    << "tile, element " << i;
                            }
                        }
                    }
    });
}

// |v - c| in units of the float spacing at term * factor: an op's error relative to its
// largest term before the multiplications by g, w and scale.
double term_ulps(float v, float c, double factor, double term) {
    if (std::isnan(v) || std::isnan(c)) return std::isnan(v) && std::isnan(c) ? 0.0 : 1e30;
    if (v == c) return 0.0;
    // Never finer than the result's own spacing (subnormal results round more coarsely).
    const double spacing = std::max(factor * std::ldexp(1.0, std::max(std::ilogb(term), -126) - 23),
                                    std::ldexp(1.0, std::max(std::ilogb(c), -126) - 23));
    return std::abs(static_cast<double>(v) - c) / spacing;
}

// The ops against the canonical libm expressions: the loss in ulp (its terms never cancel
// for y in [0, 1] and p > 0), the gradients in ulp of their largest term (s - y cancels).
TEST(BceWithLogitsVectorMath, OpsAreWithinFewUlpOfTheCanonicalLibmExpressions) {
    Operands o;
    std::mt19937 random(11);
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    for (int i = 0; i < 200000; ++i) {
        const float magnitude = i % 4 == 0 ? 100.0f : i % 4 == 1 ? 20.0f : 3.0f;
        o.self.push_back((2.0f * unit(random) - 1.0f) * magnitude);
        o.target.push_back(i % 3 == 0 ? std::round(unit(random)) : unit(random));
        o.weight.push_back(0.1f + 2.0f * unit(random));
        o.pos_weight.push_back(0.1f + 4.0f * unit(random));
        o.grad.push_back(2.0f * unit(random) - 1.0f);
    }
    const float scale = 0.25f;
    for_each_target([&](const char* name) {
        for (const bool positive : {false, true}) {
            const std::vector<float> forward = run_tile(Op::kForward, o, true, positive, 1.0f);
            const std::vector<float> backward = run_tile(Op::kBackward, o, true, positive, scale);
            const std::vector<float> target_backward =
                run_tile(Op::kTargetBackward, o, true, positive, scale);
            double forward_ulp = 0, backward_ulp = 0, target_ulp = 0;
            for (size_t i = 0; i < o.size(); ++i) {
                const float x = o.self[i], y = o.target[i], w = o.weight[i], p = o.pos_weight[i],
                            g = o.grad[i];
                const float loss = positive ? nnplug::bce_with_logits_forward_pos(x, y, w, p)
                                            : nnplug::bce_with_logits_forward(x, y, w);
                // log(1 + e) is only as accurate as 1 + e rounded, in [1, 2]: an absolute 2^-24,
                // in the canonical expression as here, so the loss's terms count at least 1.
                const nnplug::SoftplusParts parts = nnplug::softplus_parts(x);
                const double k = positive ? std::abs((p - 1.0f) * y + 1.0f) : 1.0;
                const double loss_term =
                    std::max<double>(std::abs((1.0f - y) * x), k * std::max(1.0f, parts.m + parts.sp));
                forward_ulp = std::max(forward_ulp, term_ulps(forward[i], loss, std::abs(w), loss_term));
                const float s = nnplug::bce_sigmoid(x), t = p * y;
                const float grad = positive ? nnplug::bce_with_logits_backward_pos(g, x, y, w, p, scale)
                                            : nnplug::bce_with_logits_backward(g, x, y, w, scale);
                const double term = positive ? std::max(std::abs(((t + 1.0f) - y) * s), std::abs(t))
                                             : std::max(std::abs(s), std::abs(y));
                const double factor = std::abs(static_cast<double>(g) * w * scale);
                backward_ulp = std::max(backward_ulp, term_ulps(backward[i], grad, factor, term));
                const float gradient_target =
                    positive ? nnplug::bce_with_logits_target_backward_pos(g, x, w, p, scale)
                             : nnplug::bce_with_logits_target_backward(g, x, w, scale);
                const double lsm = nnplug::bce_log_sigmoid(-x), ls = nnplug::bce_log_sigmoid(x);
                const double target_term = positive ? std::max(std::abs(lsm), std::abs(p * ls)) : std::abs(x);
                target_ulp =
                    std::max(target_ulp, term_ulps(target_backward[i], gradient_target, factor, target_term));
            }
            std::printf(
                "[ %s ] %s posWeight, in ulp of the largest term: forward max %.2f, backward max %.2f, "
                "target backward max %.2f\n",
                name, positive ? "with" : "without", forward_ulp, backward_ulp, target_ulp);
            EXPECT_LE(forward_ulp, 4.0);
            EXPECT_LE(backward_ulp, 4.0);
            EXPECT_LE(target_ulp, 4.0);
            if (!positive) {
                EXPECT_EQ(target_ulp, 0.0);  // -x times g, w, scale: no exp or log
            }
        }
    });
}

// --- the SPEC's edge values --------------------------------------------------------

struct Edge {
    float x, y, p;  // p NaN: no posWeight
    float expected;
};

constexpr float kAbsent = kNan;

void expect_edges(Op op, const std::vector<Edge>& edges) {
    for (const bool positive : {false, true}) {
        Operands o;
        std::vector<float> expected;
        for (const Edge& e : edges) {
            if (std::isnan(e.p) == positive) continue;
            o.self.push_back(e.x);
            o.target.push_back(e.y);
            o.pos_weight.push_back(e.p);
            o.grad.push_back(1.0f);
            o.weight.push_back(1.0f);
            expected.push_back(e.expected);
        }
        for (size_t i = 0; i < o.size(); ++i) {
            const float x = o.self[i], y = o.target[i], p = o.pos_weight[i];
            const float canonical =
                op == Op::kForward ? (positive ? nnplug::bce_with_logits_forward_pos(x, y, 1.0f, p)
                                               : nnplug::bce_with_logits_forward(x, y, 1.0f))
                : op == Op::kBackward
                    ? (positive ? nnplug::bce_with_logits_backward_pos(1.0f, x, y, 1.0f, p, 1.0f)
                                : nnplug::bce_with_logits_backward(1.0f, x, y, 1.0f, 1.0f))
                    : (positive ? nnplug::bce_with_logits_target_backward_pos(1.0f, x, 1.0f, p, 1.0f)
                                : nnplug::bce_with_logits_target_backward(1.0f, x, 1.0f, 1.0f));
            EXPECT_TRUE(same_bits_or_both_nan(canonical, expected[i]))
                << "canonical op " << static_cast<int>(op) << " x " << x << " y " << y << " p " << p << ": "
                << canonical << " vs " << expected[i];
        }
        for_each_target([&](const char*) {
            for (const bool weighted : {false, true}) {
                const std::vector<float> tile = run_tile(op, o, weighted, positive, 1.0f);
                std::vector<float> mapped(o.size(), -7.0f);
                const OperandAccess absent = OperandAccess::kAbsent, contiguous = OperandAccess::kContiguous;
                kernels_of(op).map(run_over(op, o, contiguous, weighted ? contiguous : absent,
                                            positive ? contiguous : absent, mapped.data()),
                                   1.0f);
                for (size_t i = 0; i < o.size(); ++i) {
                    EXPECT_TRUE(same_bits_or_both_nan(tile[i], expected[i]))
                        << "op " << static_cast<int>(op) << " x " << o.self[i] << " y " << o.target[i]
                        << " p " << o.pos_weight[i] << ": " << tile[i] << " vs " << expected[i];
                    EXPECT_TRUE(same_bits_or_both_nan(mapped[i], tile[i])) << "element " << i;
                }
            }
        });
    }
}

TEST(BceWithLogitsEdgeValues, ForwardAsTheSpecSays) {
    const float ln2_times_3 = 3.0f * kLn2;
    EXPECT_EQ(static_cast<float>(std::log(2.0)), kLn2);
    EXPECT_EQ(ln2_times_3, 2.0794415f);
    expect_edges(Op::kForward, {
                                   {-kInf, 0.0f, kAbsent, kNan},     {-kInf, 0.5f, kAbsent, kNan},
                                   {-kInf, 1.0f, kAbsent, kNan},     {-kInf, 1.0f, 3.0f, kNan},
                                   {-kInf, 0.0f, 3.0f, kNan},        {kInf, 1.0f, kAbsent, kNan},
                                   {kInf, 1.0f, 3.0f, kNan},         {0.0f, 0.0f, kAbsent, kLn2},
                                   {-0.0f, 0.0f, kAbsent, kLn2},     {0.0f, 1.0f, kAbsent, kLn2},
                                   {0.0f, 0.5f, kAbsent, kLn2},      {0.0f, 1.0f, 3.0f, 2.0794415f},
                                   {-0.0f, 1.0f, 3.0f, 2.0794415f},  {100.0f, 0.0f, kAbsent, 100.0f},
                                   {-100.0f, 1.0f, kAbsent, 100.0f}, {100.0f, 0.0f, 3.0f, 100.0f},
                                   {kInf, 0.0f, kAbsent, kInf},      {kNan, 0.5f, kAbsent, kNan},
                                   {kNan, 0.5f, 3.0f, kNan},         {1.0f, kNan, kAbsent, kNan},
                                   {1.0f, kNan, 3.0f, kNan},
                               });
}

TEST(BceWithLogitsEdgeValues, BackwardAsTheSpecSaysAndNothingOverflowsForFiniteLogits) {
    const float max = std::numeric_limits<float>::max();
    expect_edges(Op::kBackward, {
                                    {0.0f, 0.0f, kAbsent, 0.5f},
                                    {-0.0f, 0.0f, kAbsent, 0.5f},
                                    {20.0f, 0.0f, kAbsent, 1.0f},
                                    {-100.0f, 1.0f, kAbsent, -1.0f},
                                    {kInf, 0.0f, kAbsent, 1.0f},
                                    {-kInf, 1.0f, kAbsent, -1.0f},
                                    {0.0f, 1.0f, 3.0f, -1.5f},
                                    {kNan, 0.0f, kAbsent, kNan},
                                    {kNan, 1.0f, 3.0f, kNan},
                                    {max, 0.0f, kAbsent, 1.0f},
                                    {-max, 1.0f, kAbsent, -1.0f},
                                    {max, 1.0f, 3.0f, 0.0f},
                                    {-max, 1.0f, 3.0f, -3.0f},
                                    {-89.0f, 0.0f, kAbsent, 0.0f},
                                    {89.0f, 1.0f, kAbsent, 0.0f},
                                    {1.0f, kNan, kAbsent, kNan},
                                });
}

TEST(BceWithLogitsEdgeValues, TargetBackwardIsMinusXWithoutPosWeightAndFiniteForFiniteLogits) {
    const float max = std::numeric_limits<float>::max();
    // With p: log_sigmoid(-x) - p log_sigmoid(x); log_sigmoid(0) = -ln 2 exactly rounded.
    expect_edges(Op::kTargetBackward, {
                                          {2.5f, 0.0f, kAbsent, -2.5f},
                                          {-0.0f, 0.0f, kAbsent, 0.0f},
                                          {kInf, 0.0f, kAbsent, -kInf},
                                          {max, 0.0f, kAbsent, -max},
                                          {kNan, 0.0f, kAbsent, kNan},
                                          {0.0f, 0.0f, 3.0f, -kLn2 - 3.0f * -kLn2},
                                          {100.0f, 0.0f, 2.0f, -100.0f},
                                          {-100.0f, 0.0f, 2.0f, 200.0f},
                                          {max, 0.0f, 2.0f, -max},
                                          {-max, 0.0f, 0.5f, max * 0.5f},
                                          {kInf, 0.0f, 2.0f, -kInf},
                                          {-kInf, 0.0f, 2.0f, kInf},
                                          {kNan, 0.0f, 2.0f, kNan},
                                      });
}

// --- 16-bit inputs in registers ---------------------------------------------------

// Values of a dtype as raw 16-bit words, with their widened float32 values.
struct Narrow {
    std::vector<uint16_t> raw;
    std::vector<float> wide;
};

Narrow narrow(int32_t dtype, const std::vector<float>& values) {
    Narrow n;
    for (const float v : values) {
        n.raw.push_back(dtype == NNPLUG_DTYPE_F16 ? nnplug::f32_to_f16(v) : nnplug::f32_to_bf16(v));
        n.wide.push_back(dtype == NNPLUG_DTYPE_F16 ? nnplug::f16_to_f32(n.raw.back())
                                                   : nnplug::bf16_to_f32(n.raw.back()));
    }
    return n;
}

TEST(BceWithLogitsVectorMath, SixteenBitRunsEqualFloat32OnTheWidenedValuesRounded) {
    const Operands o = make_operands(517, 9);
    for (const int32_t dtype : {NNPLUG_DTYPE_F16, NNPLUG_DTYPE_BF16}) {
        const Narrow g = narrow(dtype, o.grad), x = narrow(dtype, o.self), y = narrow(dtype, o.target),
                     w = narrow(dtype, o.weight), p = narrow(dtype, o.pos_weight);
        const Operands wide{g.wide, x.wide, y.wide, w.wide, p.wide};
        for_each_target([&](const char*) {
            for (const Op op : {Op::kForward, Op::kBackward, Op::kTargetBackward})
                for (const bool positive : {false, true}) {
                    const float scale = op == Op::kForward ? 1.0f : 0.125f;
                    const std::vector<float> reference = run_tile(op, wide, true, positive, scale);
                    std::vector<uint16_t> out(o.size(), 0x7777);
                    const OperandAccess contiguous = OperandAccess::kContiguous;
                    // The accesses of a float32 run, then every input pointed at its 16-bit words.
                    VectorRun run = run_over(op, wide, contiguous, contiguous,
                                             positive ? contiguous : OperandAccess::kAbsent, nullptr);
                    run.dtype = dtype;
                    run.out = out.data();
                    const auto point = [&](int slot, const Narrow& values) {
                        run.input[slot] = values.raw.data();
                    };
                    if (op == Op::kForward) {
                        point(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_SELF, x);
                        point(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_TARGET, y);
                        point(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_WEIGHT, w);
                        point(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_POS_WEIGHT, p);
                    } else {
                        point(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_GRAD_OUTPUT, g);
                        point(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_SELF, x);
                        point(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_TARGET, y);
                        point(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_WEIGHT, w);
                        point(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_POS_WEIGHT, p);
                    }
                    kernels_of(op).map(run, scale);
                    for (size_t i = 0; i < o.size(); ++i) {
                        const float expected = rounded(dtype, reference[i]);
                        const float result = nnplug::load_as_f32(out.data(), dtype, static_cast<int64_t>(i));
                        ASSERT_TRUE(same_bits_or_both_nan(result, expected))
                            << "dtype " << dtype << " op " << static_cast<int>(op) << " element " << i << ": "
                            << result << " vs " << expected;
                    }
                }
        });
    }
}

// --- cpu_tbb's driver on descriptors -------------------------------------------------

int operand_count(Op op) {
    if (op == Op::kForward) return NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_OPERANDS;
    return NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_OPERANDS;
}
int32_t op_kind(Op op) {
    return op == Op::kForward    ? NNPLUG_OP_BINARY_CROSS_ENTROPY_WITH_LOGITS
           : op == Op::kBackward ? NNPLUG_OP_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD
                                 : NNPLUG_OP_BINARY_CROSS_ENTROPY_WITH_LOGITS_TARGET_BACKWARD;
}

// The slots of one op's operands by role.
struct Slots {
    int grad = -1, self, target, weight, pos_weight, out;
};
Slots slots_of(Op op) {
    if (op == Op::kForward)
        return {-1,
                NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_SELF,
                NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_TARGET,
                NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_WEIGHT,
                NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_POS_WEIGHT,
                NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_OUT};
    return {NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_GRAD_OUTPUT,
            NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_SELF,
            NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_TARGET,
            NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_WEIGHT,
            NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_POS_WEIGHT,
            NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_OUT};
}

TEST(BceWithLogitsDriver, PosWeightOfOneRowAgainstNByCReadsInPlaceAndEqualsTheFullPosWeight) {
    const int64_t rows = 37, columns = 53, n = rows * columns;
    for (const int32_t dtype : {NNPLUG_DTYPE_F32, NNPLUG_DTYPE_F16})
        for (const Op op : {Op::kForward, Op::kBackward, Op::kTargetBackward}) {
            SCOPED_TRACE("dtype " + std::to_string(dtype) + " op " + std::to_string(static_cast<int>(op)));
            const Slots slot = slots_of(op);
            Storage grad = nnplug::test::random_storage(dtype, 1, -2, 2, 1);
            Storage self = nnplug::test::random_storage(dtype, n, -12, 12, 2);
            Storage target = nnplug::test::random_storage(dtype, n, 0, 1, 3);
            Storage weight = nnplug::test::random_storage(dtype, columns, 0, 2, 4);
            Storage row = nnplug::test::random_storage(dtype, columns, 0, 4, 5);
            Storage full(dtype, n), out(dtype, n), full_out(dtype, n);
            for (int64_t i = 0; i < n; ++i) full.set(i, row.get(i % columns));
            Call call(op_kind(op), {rows, columns}, NNPLUG_REDUCTION_MEAN, operand_count(op));
            if (op == Op::kForward)
                call = Call(op_kind(op), {rows, columns}, NNPLUG_REDUCTION_NONE, operand_count(op));
            call.promote_to(dtype);
            if (slot.grad >= 0) call.operand(slot.grad, grad, {0, 0});  // after a mean: one value
            call.operand(slot.self, self, {columns, 1});
            call.operand(slot.target, target, {columns, 1});
            call.operand(slot.weight, weight, {0, 1});
            call.operand(slot.pos_weight, row, {0, 1});
            call.operand(slot.out, out, {columns, 1}, NNPLUG_OPERAND_OUTPUT);
            Call materialized = call;
            materialized.operand(slot.pos_weight, full, {columns, 1});
            materialized.operand(slot.out, full_out, {columns, 1}, NNPLUG_OPERAND_OUTPUT);
            call.run(kernels_of(op), 500, true);  // ranges that end inside rows
            materialized.run(kernels_of(op), n, true);
            ASSERT_EQ(out.words, full_out.words);
            // And the values: the float32 tile on the widened operands, rounded to dtype.
            Operands wide;
            for (int64_t i = 0; i < n; ++i) {
                wide.grad.push_back(grad.get(0));
                wide.self.push_back(self.get(i));
                wide.target.push_back(target.get(i));
                wide.weight.push_back(weight.get(i % columns));
                wide.pos_weight.push_back(row.get(i % columns));
            }
            const std::vector<float> reference =
                run_tile(op, wide, true, true, nnplug::sdk::scale(call.desc));
            for (int64_t i = 0; i < n; ++i)
                ASSERT_TRUE(
                    same_bits_or_both_nan(out.get(i), rounded(dtype, reference[static_cast<size_t>(i)])))
                    << "element " << i;
        }
}

TEST(BceWithLogitsDriver, ForwardRoundsWeightAndPosWeightToThePromotedDtypeFirst) {
    const int64_t rows = 9, columns = 300, n = rows * columns;
    Storage self = nnplug::test::random_storage(NNPLUG_DTYPE_F16, n, -6, 6, 7);
    Storage target = nnplug::test::random_storage(NNPLUG_DTYPE_F16, n, 0, 1, 8);
    Storage weight = nnplug::test::random_storage(NNPLUG_DTYPE_F32, n, 0, 2, 9);  // float32 digits
    Storage pos_weight =
        nnplug::test::random_storage(NNPLUG_DTYPE_BF16, columns, 0, 4, 10);  // bfloat16 digits
    Storage one_weight = nnplug::test::random_storage(NNPLUG_DTYPE_F32, 1, 0.3f, 0.4f, 11);
    // The same values cast to float16 first: an all-float16 call, read in place.
    Storage weight16(NNPLUG_DTYPE_F16, n), pos_weight16(NNPLUG_DTYPE_F16, columns),
        one16(NNPLUG_DTYPE_F16, 1);
    for (int64_t i = 0; i < n; ++i) weight16.set(i, weight.get(i));
    for (int64_t i = 0; i < columns; ++i) pos_weight16.set(i, pos_weight.get(i));
    one16.set(0, one_weight.get(0));
    for (const bool splat_weight : {false, true}) {
        SCOPED_TRACE(splat_weight ? "weight of one element" : "weight of every element");
        Storage out(NNPLUG_DTYPE_F16, n), expected(NNPLUG_DTYPE_F16, n), unrounded(NNPLUG_DTYPE_F16, n);
        Call mixed(NNPLUG_OP_BINARY_CROSS_ENTROPY_WITH_LOGITS, {rows, columns}, NNPLUG_REDUCTION_NONE,
                   NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_OPERANDS);
        mixed.operand(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_SELF, self, {columns, 1});
        mixed.operand(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_TARGET, target, {columns, 1});
        if (splat_weight)
            mixed.operand(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_WEIGHT, one_weight, {0, 0});
        else
            mixed.operand(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_WEIGHT, weight, {columns, 1});
        mixed.operand(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_POS_WEIGHT, pos_weight, {0, 1});
        mixed.operand(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_OUT, out, {columns, 1}, NNPLUG_OPERAND_OUTPUT);
        Call as_float32 = mixed;  // no promoted dtype: float32, nothing rounded
        as_float32.operand(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_OUT, unrounded, {columns, 1},
                           NNPLUG_OPERAND_OUTPUT);
        mixed.promote_to(NNPLUG_DTYPE_F16);
        Call half = mixed;
        if (splat_weight)
            half.operand(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_WEIGHT, one16, {0, 0});
        else
            half.operand(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_WEIGHT, weight16, {columns, 1});
        half.operand(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_POS_WEIGHT, pos_weight16, {0, 1});
        half.operand(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_OUT, expected, {columns, 1},
                     NNPLUG_OPERAND_OUTPUT);
        mixed.run(nnplug::cpu::bce_with_logits_kernels(), 777, false);
        half.run(nnplug::cpu::bce_with_logits_kernels(), n, true);
        as_float32.run(nnplug::cpu::bce_with_logits_kernels(), n, false);
        EXPECT_EQ(out.words, expected.words);
        EXPECT_NE(unrounded.words, expected.words);  // the rounding shows in some elements
    }
}

TEST(BceWithLogitsDriver, ForwardSumAndMeanByFixedChunksAreCloseToFloat64AndIndependentOfTheOrder) {
    const int64_t n = 3 * nnplug::cpu::kReduceChunk + 1234;
    Storage self = nnplug::test::random_storage(NNPLUG_DTYPE_F32, n, -30, 30, 12);
    Storage target = nnplug::test::random_storage(NNPLUG_DTYPE_F32, n, 0, 1, 13);
    Storage pos_weight = nnplug::test::random_storage(NNPLUG_DTYPE_F32, 1, 1, 3, 14);
    for (const int reduction : {NNPLUG_REDUCTION_SUM, NNPLUG_REDUCTION_MEAN}) {
        Storage out(NNPLUG_DTYPE_F32, 1), again(NNPLUG_DTYPE_F32, 1);
        Call call(NNPLUG_OP_BINARY_CROSS_ENTROPY_WITH_LOGITS, {n}, reduction,
                  NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_OPERANDS);
        call.operand(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_SELF, self, {1});
        call.operand(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_TARGET, target, {1});
        call.operand(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_POS_WEIGHT, pos_weight, {0});
        call.operand(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_OUT, out, {0},
                     NNPLUG_OPERAND_OUTPUT | NNPLUG_OPERAND_REDUCED);
        Call second = call;
        second.operand(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_OUT, again, {0},
                       NNPLUG_OPERAND_OUTPUT | NNPLUG_OPERAND_REDUCED);
        const auto reduce = [](const Call& c, bool backwards) {
            const nnplug::cpu::ElementwiseCall reducing(nnplug::cpu::bce_with_logits_kernels(), c.desc);
            EXPECT_TRUE(reducing.reduces());
            EXPECT_TRUE(reducing.reads_in_place());
            std::vector<double> partials(static_cast<size_t>(reducing.reduce_chunks()));
            for (size_t k = 0; k < partials.size(); ++k) {
                const size_t chunk = backwards ? partials.size() - 1 - k : k;
                partials[chunk] = reducing.sum_chunk(static_cast<int64_t>(chunk));
            }
            reducing.finish_reduction(partials.data(), static_cast<int64_t>(partials.size()));
        };
        reduce(call, false);
        reduce(second, true);
        EXPECT_EQ(out.words, again.words);
        double total = 0;
        for (int64_t i = 0; i < n; ++i)
            total += nnplug::bce_with_logits_forward_pos(self.get(i), target.get(i), 1.0f, pos_weight.get(0));
        if (reduction == NNPLUG_REDUCTION_MEAN) total /= static_cast<double>(n);
        EXPECT_NEAR(out.get(0), total, 1e-6 * std::abs(total));
    }
}

}  // namespace
