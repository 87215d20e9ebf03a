// The vector math of the binary cross-entropy on logits (backends/common/bce_with_logits-inl.h)
// on each Highway target the CPU supports: its exp within 1 ulp over a dense sweep; the
// loss and both gradients equal to the canonical expressions evaluated with the vector
// exp / log pieces bit for bit (the same operations in the same order), and within a few
// ulp of the canonical libm expressions; the SPEC's edge values exactly; 16-bit inputs;
// and cpu_tbb's driver on descriptors: posWeight [C] against [N, C], weight rounded to the
// promoted dtype, reductions.
#include <gtest/gtest.h>
#include <hwy/targets.h>
#include <nnplug/dtype_convert.h>
#include <nnplug/ops/bce_with_logits_math.h>
#include <nnplug/plugin_support.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "bce_with_logits_simd.h"
#include "bce_with_logits_tile.h"
#include "driver_call.h"

namespace {

using nnplug::cpu::OperandAccess;
using nnplug::cpu::VectorRun;
using nnplug::test::Call;
using nnplug::test::rounded;
using nnplug::test::same_bits_or_both_nan;
using nnplug::test::Storage;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

template <typename Body>
void for_each_target(Body&& body) {
    for (const int64_t target : hwy::SupportedAndGeneratedTargets()) {
        hwy::SetSupportedTargetsForTest(target);
        SCOPED_TRACE(hwy::TargetName(target));
        body(hwy::TargetName(target));
    }
    hwy::SetSupportedTargetsForTest(0);
}

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
    for (uint32_t bits = std::min(a, b); bits <= std::max(a, b); bits += step) into.push_back(nnplug::bits_float(bits));
}

// --- exp -------------------------------------------------------------------------

TEST(BceWithLogitsVectorMath, ExpIsWithinOneUlpOverADenseSweep) {
    std::vector<float> x;
    add_floats(x, 0.0f, 89.0f, 997);     // every 997th float of [0, 89]
    add_floats(x, -0.0f, -104.0f, 997);  // and of [-104, 0]
    add_floats(x, 0.34f, 0.36f, 1);      // every float around ln(2) / 2, where n steps
    add_floats(x, -0.34f, -0.36f, 1);
    add_floats(x, 88.0f, 89.0f, 1);      // every float around the overflow
    add_floats(x, -87.0f, -104.0f, 7);   // and through the subnormal results
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
        std::printf("[ %s ] vector exp over %zu floats: max error %.3f ulp (at %g), max %lld ulp from the "
                    "rounded exact value\n",
                    name, x.size(), worst, worst_x, static_cast<long long>(worst_distance));
        EXPECT_LT(worst, 1.0);
    });
}

TEST(BceWithLogitsVectorMath, ExpSpecialCases) {
    const float max_finite = 88.72283172607421875f;  // the last float whose exp is finite
    const std::vector<float> x = {0.0f, -0.0f, kInf, -kInf, kNan, max_finite, std::nextafter(max_finite, kInf),
                                  100.0f, 3e38f, -103.9f, -104.0f, -3e38f, -87.0f, 1e-8f, -1e-8f};
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
                const double distance = piece.absolute ? std::abs(static_cast<double>(out[i]) - canonical) * 0x1p24
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
    const float specials[] = {0.0f,  -0.0f, kInf,  -kInf,   kNan,   100.0f, -100.0f, 88.8f,  -88.8f, 1e-30f,
                              -1e-8f, 17.0f, -17.0f, 3e38f, -3e38f, 1e-45f, 0.5f,    -103.f, 200.f,  -0.7f};
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
    const float loss = positive ? (1.0f - y) * x + ((p - 1.0f) * y + 1.0f) * (sp + m) : (((1.0f - y) * x + m) + sp);
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
    if (op == Op::kForward) nnplug::simd::logits_forward_tile(o.self.data(), o.target.data(), w, p, out.data(), n);
    if (op == Op::kBackward)
        nnplug::simd::logits_backward_tile(o.grad.data(), o.self.data(), o.target.data(), w, p, scale, out.data(), n);
    if (op == Op::kTargetBackward)
        nnplug::simd::logits_target_backward_tile(o.grad.data(), o.self.data(), w, p, scale, out.data(), n);
    return out;
}

const nnplug::cpu::VectorKernels& kernels_of(Op op) {
    if (op == Op::kForward) return nnplug::cpu::bce_with_logits_kernels();
    if (op == Op::kBackward) return nnplug::cpu::bce_with_logits_backward_kernels();
    return nnplug::cpu::bce_with_logits_target_backward_kernels();
}

VectorRun run_over(Op op, const Operands& o, OperandAccess grad, OperandAccess weight, OperandAccess pos_weight,
                   float* out) {
    VectorRun run;
    run.length = static_cast<int64_t>(o.size());
    run.out = out;
    const auto set = [&](int slot, const std::vector<float>& values, OperandAccess access) {
        run.input[slot] = values.data();
        run.access[slot] = access;
    };
    if (op == Op::kForward) {
        set(NNPLUG_BCE_WITH_LOGITS_SELF, o.self, OperandAccess::kContiguous);
        set(NNPLUG_BCE_WITH_LOGITS_TARGET, o.target, OperandAccess::kContiguous);
        set(NNPLUG_BCE_WITH_LOGITS_WEIGHT, o.weight, weight);
        set(NNPLUG_BCE_WITH_LOGITS_POS_WEIGHT, o.pos_weight, pos_weight);
    } else {
        set(NNPLUG_BCE_WITH_LOGITS_BACKWARD_GRAD_OUTPUT, o.grad, grad);
        set(NNPLUG_BCE_WITH_LOGITS_BACKWARD_SELF, o.self, OperandAccess::kContiguous);
        set(NNPLUG_BCE_WITH_LOGITS_BACKWARD_TARGET, o.target, OperandAccess::kContiguous);
        set(NNPLUG_BCE_WITH_LOGITS_BACKWARD_WEIGHT, o.weight, weight);
        set(NNPLUG_BCE_WITH_LOGITS_BACKWARD_POS_WEIGHT, o.pos_weight, pos_weight);
    }
    return run;
}

constexpr OperandAccess kAccesses[] = {OperandAccess::kAbsent, OperandAccess::kSplat, OperandAccess::kContiguous};

// Element i of the op with the vector pieces, each input at its access.
float expected_with_pieces(Op op, const Operands& o, const Pieces& pieces, size_t i, OperandAccess grad,
                           OperandAccess weight, OperandAccess pos_weight, float scale) {
    const auto at = [i](const std::vector<float>& v, OperandAccess access) {
        return access == OperandAccess::kSplat ? v[0] : access == OperandAccess::kContiguous ? v[i] : 0.0f;
    };
    const bool weighted = weight != OperandAccess::kAbsent, positive = pos_weight != OperandAccess::kAbsent;
    const float w = at(o.weight, weight), p = at(o.pos_weight, pos_weight), g = at(o.grad, grad);
    if (op == Op::kForward) return forward_with(pieces.sp[i], o.self[i], o.target[i], w, p, weighted, positive);
    if (op == Op::kBackward) return backward_with(pieces.s[i], g, o.target[i], w, p, scale, weighted, positive);
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
                                               weight != OperandAccess::kSplat && pos_weight != OperandAccess::kSplat;
                        if (tile_case)
                            tile = run_tile(op, o, weight != OperandAccess::kAbsent,
                                            pos_weight != OperandAccess::kAbsent, scale);
                        for (size_t i = 0; i < o.size(); ++i) {
                            const float expected =
                                expected_with_pieces(op, o, pieces, i, grad, weight, pos_weight, scale);
                            ASSERT_TRUE(same_bits_or_both_nan(out[i], expected))
                                << "op " << static_cast<int>(op) << " weight " << static_cast<int>(weight)
                                << " posWeight " << static_cast<int>(pos_weight) << " grad "
                                << static_cast<int>(grad) << " element " << i << " (x = " << o.self[i]
                                << "): " << out[i] << " vs " << expected;
                            if (tile_case) {
                                ASSERT_TRUE(same_bits_or_both_nan(tile[i], out[i])) << "tile, element " << i;
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
            const std::vector<float> target_backward = run_tile(Op::kTargetBackward, o, true, positive, scale);
            double forward_ulp = 0, backward_ulp = 0, target_ulp = 0;
            for (size_t i = 0; i < o.size(); ++i) {
                const float x = o.self[i], y = o.target[i], w = o.weight[i], p = o.pos_weight[i], g = o.grad[i];
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
                target_ulp = std::max(target_ulp, term_ulps(target_backward[i], gradient_target, factor, target_term));
            }
            std::printf("[ %s ] %s posWeight, in ulp of the largest term: forward max %.2f, backward max %.2f, "
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

}  // namespace
