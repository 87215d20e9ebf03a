// Every golden case list (tests/golden/*_golden.txt, generated with PyTorch) on the backend
// NNPLUG_BACKEND names, whatever the op: dtype mixes, broadcasting, strided and transposed
// views (inputs and outputs), 0-d to 8-d shapes, empty tensors, every reduction, and edge
// values.
//
// With `expect_bits` (the canonical float32 expression, e.g. the BCE backward): the output's
// whole storage equals it bit for bit (one ulp of slack for mean), and the view is within
// rounding of PyTorch's float64 result. With `expect_ulps n` (an expression whose exp/log
// the backend implements itself, e.g. the with-logits gradients): each view element within n
// ulps of the expectation. Without either: float32 rtol 1e-5 per element, mean/sum rtol 1e-6
// against float64, float16 and bfloat16 within one ulp of the float64 result rounded to the
// dtype. A case's `scale_f64` adds an absolute allowance for float32 terms that cancel
// (golden_cases.h, kScaleEpsilons) to each of these. Storage outside the output's view stays
// untouched.
#include <gtest/gtest.h>
#include <nnplug/dtype_convert.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>

#include "acl_test_support.h"
#include "golden_cases.h"
#include "op_catalog.h"

namespace {

using nnplug::test::GoldenCase;
using nnplug::test::GoldenTensor;
using nnplug::test::bits_at;
using nnplug::test::ulp_distance;
using nnplug::test::value_of;

const std::vector<GoldenCase>& all_cases() {
    static const auto cases = nnplug::test::load_golden_folder(NNPLUG_GOLDEN_DIR);
    return cases;
}

// A float rounded to dtype and widened back.
float rounded_to(float value, aclDataType dtype) {
    if (dtype == ACL_FLOAT) return value;
    return dtype == ACL_FLOAT16 ? nnplug::f16_to_f32(nnplug::f32_to_f16(value))
                                : nnplug::bf16_to_f32(nnplug::f32_to_bf16(value));
}

// The relative tolerance of out's dtype against float64 results: a few of its ulps.
double relative_tolerance(aclDataType dtype) {
    return dtype == ACL_FLOAT ? 1e-5 : dtype == ACL_FLOAT16 ? 0x1p-10 : 0x1p-7;
}

// A result against a float64 reference: same NaN-ness, same infinity, else within tolerance
// (rtol of the reference plus an absolute allowance).
void expect_close(float result, double reference, aclDataType dtype, double rtol, double allowance,
                  const std::string& where) {
    const float expected = rounded_to(static_cast<float>(reference), dtype);
    if (std::isnan(reference)) {
        EXPECT_TRUE(std::isnan(result)) << where << ": expected NaN, got " << result;
    } else if (std::isinf(expected)) {
        EXPECT_EQ(result, expected) << where;
    } else {
        const double tolerance =
            rtol * std::abs(reference) + (dtype == ACL_FLOAT16 ? 0x1p-24 : 1e-37) + allowance;
        EXPECT_NEAR(result, reference, tolerance) << where;
    }
}

// A result against another float32 evaluation rounded to dtype: NaN where it is NaN, an
// infinity exactly, else within `ulps` of dtype at the expectation plus the scale allowance
// of both evaluations.
void expect_near(uint32_t got, uint32_t want, aclDataType dtype, int64_t ulps, double allowance,
                 const std::string& where) {
    const float got_value = value_of(got, dtype), want_value = value_of(want, dtype);
    if (std::isnan(want_value)) {
        EXPECT_TRUE(std::isnan(got_value)) << where << ": expected NaN, got " << got_value;
    } else if (std::isinf(want_value)) {
        EXPECT_EQ(got_value, want_value) << where;
    } else {
        const double tolerance = static_cast<double>(ulps) * nnplug::test::ulp_of(want_value, dtype) + 2 * allowance;
        EXPECT_NEAR(got_value, want_value, tolerance)
            << where << ": " << ulp_distance(got, want, dtype) << " ulps (allowed " << ulps << " plus "
            << 2 * allowance << ")";
    }
}

class GoldenCases : public nnplug::test::RuntimeTest, public ::testing::WithParamInterface<size_t> {};

// Any op of the catalog: its output's storage outside the view is untouched; a case with
// `expect_bits` must give exactly those bits (one ulp of slack for a mean), one with
// `expect_ulps` within that many ulps, and every case is compared with its float64
// reference. A case's `scale_f64` adds its absolute allowance to both comparisons.
TEST_P(GoldenCases, MatchesExpectation) {
    const GoldenCase& golden = all_cases()[GetParam()];
    const nnplug::test::GoldenRun run = nnplug::test::run_golden_case(golden);
    ASSERT_EQ(run.status, ACLNN_SUCCESS) << run.message;

    const GoldenTensor& out_spec = golden.tensors.at(nnplug::test::op_named(golden.op).output);
    const auto& after = run.output;
    const aclDataType dtype = out_spec.dtype;
    const auto view = out_spec.view_indices();
    const int64_t reduction = golden.attr("reduction");
    std::vector<bool> in_view(after.size() / (dtype == ACL_FLOAT ? 4 : 2), false);
    for (int64_t index : view) in_view[index] = true;
    for (size_t i = 0; i < in_view.size(); ++i) {
        if (!in_view[i]) {
            EXPECT_EQ(bits_at(after, dtype, i), bits_at(out_spec.storage, dtype, i))
                << "storage element " << i << " outside the output's view was written";
        }
    }
    const auto allowance = [&](size_t n) { return nnplug::test::scale_allowance(golden, n); };
    if (!golden.expect_bits.empty() || golden.expect_ulps >= 0) {
        ASSERT_EQ(golden.reference.size(), view.size());
        for (size_t n = 0; n < view.size(); ++n) {
            const uint32_t got = bits_at(after, dtype, view[n]);
            const float got_value = value_of(got, dtype);
            const std::string where = "view element " + std::to_string(n);
            if (golden.expect_ulps >= 0) {
                expect_near(got, bits_at(golden.expect_near_bits, dtype, view[n]), dtype, golden.expect_ulps,
                            allowance(n), where);
            } else {
                const uint32_t want = bits_at(golden.expect_bits, dtype, view[n]);
                const float want_value = value_of(want, dtype);
                if (std::isnan(want_value)) {
                    EXPECT_TRUE(std::isnan(got_value)) << where << ": canonical is NaN, got " << got_value;
                } else if (reduction == 1 && !std::isnan(got_value)) {
                    EXPECT_LE(ulp_distance(got, want, dtype), 1) << where << ": " << got_value << " vs " << want_value;
                } else {
                    EXPECT_EQ(got, want) << where << ": " << got_value << " vs canonical " << want_value;
                }
            }
            expect_close(got_value, golden.reference[n], dtype, relative_tolerance(dtype), allowance(n),
                         where + " vs PyTorch");
        }
        return;
    }
    if (reduction != 0) {
        ASSERT_EQ(view.size(), 1u);
        ASSERT_EQ(golden.reference.size(), 1u);
        const float got = value_of(bits_at(after, dtype, view[0]), dtype);
        const double rtol = dtype == ACL_FLOAT ? 1e-6 : relative_tolerance(dtype) / 2;
        expect_close(got, golden.reference[0], dtype, rtol, allowance(0), reduction == 1 ? "mean" : "sum");
        return;
    }
    ASSERT_EQ(golden.reference.size(), view.size());
    for (size_t n = 0; n < view.size(); ++n) {
        const uint32_t got = bits_at(after, dtype, view[n]);
        const std::string where = "view element " + std::to_string(n);
        if (dtype == ACL_FLOAT) {
            expect_close(value_of(got, dtype), golden.reference[n], dtype, 1e-5, allowance(n), where);
            continue;
        }
        const float expected = rounded_to(static_cast<float>(golden.reference[n]), dtype);
        if (std::isnan(expected)) {
            EXPECT_TRUE(std::isnan(value_of(got, dtype))) << where;
        } else {
            const uint32_t want = dtype == ACL_FLOAT16 ? nnplug::f32_to_f16(expected) : nnplug::f32_to_bf16(expected);
            EXPECT_LE(ulp_distance(got, want, dtype), 1)
                << where << ": " << value_of(got, dtype) << " vs " << golden.reference[n];
        }
    }
}

std::string case_name(const ::testing::TestParamInfo<size_t>& info) { return all_cases()[info.param].name; }

std::vector<size_t> case_indices() {
    std::vector<size_t> indices(all_cases().size());
    for (size_t i = 0; i < indices.size(); ++i) indices[i] = i;
    return indices;
}

INSTANTIATE_TEST_SUITE_P(Cases, GoldenCases, ::testing::ValuesIn(case_indices()), case_name);

// The largest differences over every case, per op, for float32 outputs: against float64
// (relative) and, with expect_ulps, in ulps of the expectation (PyTorch's float32 result).
// "plain" elements are those whose terms do not cancel (scale at most 4 |reference|, or no
// scale), where both measures are meaningful; over all elements the error beyond the scale
// allowance is given. Printed for the record (the docs cite them); beyond-allowance ulps
// above a case's expect_ulps fail, as in MatchesExpectation.
class GoldenSummary : public nnplug::test::RuntimeTest {};

TEST_F(GoldenSummary, LargestDifferencesPerOp) {
    struct Largest {
        double relative = 0, relative_beyond = 0;
        int64_t ulps = 0, ulps_beyond = 0, allowed = -1;
        size_t plain = 0, elements = 0;
    };
    std::map<std::string, Largest> largest;
    for (const GoldenCase& golden : all_cases()) {
        const nnplug::test::GoldenRun run = nnplug::test::run_golden_case(golden);
        ASSERT_EQ(run.status, ACLNN_SUCCESS) << golden.name << ": " << run.message;
        const GoldenTensor& out_spec = golden.tensors.at(nnplug::test::op_named(golden.op).output);
        const aclDataType dtype = out_spec.dtype;
        if (dtype != ACL_FLOAT) continue;
        const bool reduced = golden.attr("reduction") != 0 && golden.expect_bits.empty() && golden.expect_ulps < 0;
        Largest& entry = largest[golden.op + (reduced ? " (mean/sum)" : "")];
        const auto view = out_spec.view_indices();
        for (size_t n = 0; n < view.size() && n < golden.reference.size(); ++n) {
            const uint32_t got = bits_at(run.output, dtype, view[n]);
            const double value = value_of(got, dtype), reference = golden.reference[n];
            if (!std::isfinite(reference) || reference == 0 || !std::isfinite(value)) continue;
            const double allowance = nnplug::test::scale_allowance(golden, n);
            // (and not in float32's subnormal range, where exp underflows by design)
            const bool plain = (golden.scale.empty() || golden.scale[n] <= 4 * std::abs(reference)) &&
                               std::abs(reference) >= 0x1p-126;
            const double error = std::abs(value - reference);
            ++entry.elements;
            entry.relative_beyond =
                std::max(entry.relative_beyond, std::max(0.0, error - allowance) / std::abs(reference));
            if (plain) {
                ++entry.plain;
                entry.relative = std::max(entry.relative, error / std::abs(reference));
            }
            if (golden.expect_ulps < 0) continue;
            const uint32_t want = bits_at(golden.expect_near_bits, dtype, view[n]);
            const float want_value = value_of(want, dtype);
            if (!std::isfinite(want_value)) continue;
            if (plain) entry.ulps = std::max(entry.ulps, ulp_distance(got, want, dtype));
            const double beyond = std::max(0.0, std::abs(value - want_value) - 2 * allowance) /
                                  nnplug::test::ulp_of(want_value, dtype);
            const auto beyond_ulps = static_cast<int64_t>(std::ceil(beyond));
            entry.ulps_beyond = std::max(entry.ulps_beyond, beyond_ulps);
            entry.allowed = std::max(entry.allowed, golden.expect_ulps);
            EXPECT_LE(beyond_ulps, golden.expect_ulps) << golden.name << " view element " << n;
        }
    }
    for (const auto& [op, entry] : largest) {
        std::printf("%s: float32 vs float64: max rel %.3g over %zu plain elements, %.3g beyond the allowance over all "
                    "%zu",
                    op.c_str(), entry.relative, entry.plain, entry.relative_beyond, entry.elements);
        if (entry.allowed >= 0) {
            std::printf("; vs PyTorch float32: max %lld ulps on plain elements, %lld beyond the allowance (%lld "
                        "allowed)",
                        static_cast<long long>(entry.ulps), static_cast<long long>(entry.ulps_beyond),
                        static_cast<long long>(entry.allowed));
        }
        std::printf("\n");
    }
}

TEST(GoldenFiles, HoldCasesForEveryOp) {
    // Guards against a truncated or regenerated-empty file passing silently.
    EXPECT_GE(all_cases().size(), 200u);
    for (const auto& op : nnplug::test::op_catalog()) {
        const auto cases = std::count_if(all_cases().begin(), all_cases().end(),
                                         [&](const GoldenCase& golden) { return golden.op == op.name; });
        EXPECT_GE(cases, 20) << op.api << " has too few golden cases";
    }
}

}  // namespace
