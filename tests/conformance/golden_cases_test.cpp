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
#include "golden_cases.h"

#include <gtest/gtest.h>
#include <nnplug/dtype_convert.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>

#include "acl_test_support.h"
#include "op_catalog.h"

namespace {

using nnplug::test::bits_at;
using nnplug::test::GoldenCase;
using nnplug::test::GoldenTensor;
using nnplug::test::ulp_distance;
using nnplug::test::value_of;

const std::vector<GoldenCase>& all_cases() {
    static const auto cases = nnplug::test::load_golden_folder(NNPLUG_GOLDEN_DIR);
    return cases;
}

class GoldenCases : public nnplug::test::RuntimeTest, public ::testing::WithParamInterface<size_t> {};

// Any op of the catalog, checked by the conformance kit's check_golden_run: its output's
// storage outside the view is untouched; a case with `expect_bits` must give exactly those
// bits (one ulp of slack for a mean), one with `expect_ulps` within that many ulps, and every
// case is compared with its float64 reference. A case's `scale_f64` adds its absolute
// allowance to both comparisons.
TEST_P(GoldenCases, MatchesExpectation) {
    const GoldenCase& golden = all_cases()[GetParam()];
    const nnplug::test::GoldenRun run = nnplug::test::run_golden_case(golden);
    ASSERT_EQ(run.status, ACLNN_SUCCESS) << run.message;
    EXPECT_EQ(nnplug::test::check_golden_run(golden, run), "");
}

std::string case_name(const ::testing::TestParamInfo<size_t>& info) {
    return all_cases()[info.param].name;
}

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
        const bool reduced =
            golden.attr("reduction") != 0 && golden.expect_bits.empty() && golden.expect_ulps < 0;
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
        std::printf(
            "%s: float32 vs float64: max rel %.3g over %zu plain elements, %.3g beyond the allowance over "
            "all "
            "%zu",
            op.c_str(), entry.relative, entry.plain, entry.relative_beyond, entry.elements);
        if (entry.allowed >= 0) {
            std::printf(
                "; vs PyTorch float32: max %lld ulps on plain elements, %lld beyond the allowance (%lld "
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

// An op that promises its canonical expression given the backend's exp and log is checked
// by the kit's probed cases, which its folder's kit rules must make possible; an op that
// promises less must not be held to them.
TEST(KitRules, ProbeExactlyTheOpsThatPromiseTheCanonicalOrder) {
    for (const auto& op : nnplug::test::op_catalog()) {
        EXPECT_EQ(op.kit.probe_inputs != nullptr, op.schema.canonical_order) << op.api;
        EXPECT_EQ(op.kit.canonical_given != nullptr, op.schema.canonical_order) << op.api;
    }
}

}  // namespace
