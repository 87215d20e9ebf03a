// The short-row kernels of the cross-entropy ops (backends/common/class_rows_tile.h) on each
// Highway target the CPU supports: a block of rows held in vector lanes (moved between rows
// and columns whole 4x4 tiles at a time where it can) gives, row by row, what the per-row
// functions give, for class counts on either side of every tile and vector width, rows with
// gaps between them, and a last block that is not full; the gaps are never written.
#include <gtest/gtest.h>
#include <hwy/targets.h>
#include <nnplug/plugin.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "class_rows_tile.h"
#include "simd_targets.h"

namespace {

using nnplug::test::for_each_target;

namespace simd = nnplug::simd;

constexpr int64_t kRows = 2 * 16 + 5;  // two full blocks at every width, then a partial one
constexpr float kUnwritten = -12345.0f;
const int64_t kClassCounts[] = {1, 2, 3, 4, 5, 7, 8, 10, 12, 13, 16, 17, 31, 32};

std::vector<float> logits(int64_t classes, int64_t stride, uint32_t seed) {
    std::mt19937 random(seed);
    std::uniform_real_distribution<float> value(-5.0f, 5.0f);
    std::vector<float> x(static_cast<size_t>(kRows * stride), kUnwritten);
    for (int64_t r = 0; r < kRows; ++r)
        for (int64_t c = 0; c < classes; ++c) x[static_cast<size_t>(r * stride + c)] = value(random);
    return x;
}

void expect_near(float actual, float expected, int64_t row, int64_t cls) {
    EXPECT_NEAR(actual, expected, 4e-6 * std::max(1.0f, std::fabs(expected)))
        << "row " << row << " class " << cls;
}

// The gaps between rows (stride past the classes) still hold kUnwritten.
void expect_gaps_untouched(const std::vector<float>& out, int64_t classes, int64_t stride) {
    for (int64_t r = 0; r < kRows; ++r)
        for (int64_t c = classes; c < stride; ++c)
            EXPECT_EQ(out[static_cast<size_t>(r * stride + c)], kUnwritten)
                << "gap of row " << r << " written";
}

TEST(ClassRowsSimd, LogSoftmaxRowsAreThePerRowLogSoftmax) {
    for_each_target([] {
        for (const int64_t n : kClassCounts) {
            SCOPED_TRACE("classes " + std::to_string(n));
            const int64_t in_stride = n + 3, out_stride = n + 1;
            const std::vector<float> x = logits(n, in_stride, static_cast<uint32_t>(n));
            std::vector<float> out(static_cast<size_t>(kRows * out_stride), kUnwritten);
            std::vector<float> lse(kRows);
            std::vector<double> sums(kRows);
            const simd::RowBlock rows{x.data(),         in_stride, out.data(), out_stride,
                                      NNPLUG_DTYPE_F32, kRows,     n};
            simd::log_softmax_rows(rows, nullptr, true, lse.data(), sums.data());
            for (int64_t r = 0; r < kRows; ++r) {
                const float* in = x.data() + r * in_stride;
                const float expected_lse = simd::row_lse(in, NNPLUG_DTYPE_F32, n).value();
                expect_near(lse[static_cast<size_t>(r)], expected_lse, r, -1);
                std::vector<float> expected(static_cast<size_t>(n));
                const double expected_sum = simd::log_softmax_row(in, NNPLUG_DTYPE_F32, n, expected_lse,
                                                                  expected.data(), nullptr, true);
                EXPECT_NEAR(sums[static_cast<size_t>(r)], expected_sum,
                            1e-5 * std::max(1.0, std::fabs(expected_sum)));
                for (int64_t c = 0; c < n; ++c)
                    expect_near(out[static_cast<size_t>(r * out_stride + c)],
                                expected[static_cast<size_t>(c)], r, c);
            }
            expect_gaps_untouched(out, n, out_stride);
        }
    });
}

TEST(ClassRowsSimd, GradientRowsAreThePerRowGradient) {
    for_each_target([] {
        for (const int64_t n : kClassCounts) {
            SCOPED_TRACE("classes " + std::to_string(n));
            const int64_t in_stride = n + 2, out_stride = n + 3;
            std::vector<float> lp = logits(n, in_stride, static_cast<uint32_t>(100 + n));
            for (int64_t r = 0; r < kRows; ++r)  // log-probabilities: at most 0
                for (int64_t c = 0; c < n; ++c) lp[static_cast<size_t>(r * in_stride + c)] -= 6.0f;
            std::vector<float> a(kRows), b(kRows), nll(kRows);
            std::vector<int64_t> target(kRows);
            for (int64_t r = 0; r < kRows; ++r) {
                a[static_cast<size_t>(r)] = 0.5f + 0.01f * static_cast<float>(r);
                b[static_cast<size_t>(r)] = 0.25f - 0.003f * static_cast<float>(r);
                nll[static_cast<size_t>(r)] = 0.75f + 0.002f * static_cast<float>(r);
                target[static_cast<size_t>(r)] = r % 7 == 3 ? -1 : (r * 5) % n;  // some rows ignored
            }
            std::vector<float> out(static_cast<size_t>(kRows * out_stride), kUnwritten);
            const simd::RowBlock rows{lp.data(),        in_stride, out.data(), out_stride,
                                      NNPLUG_DTYPE_F32, kRows,     n};
            simd::cross_entropy_grad_rows(rows, {a.data(), b.data(), nll.data(), target.data()}, nullptr);
            for (int64_t r = 0; r < kRows; ++r) {
                const auto k = static_cast<size_t>(r);
                std::vector<float> expected(static_cast<size_t>(n), 0.0f);
                if (target[k] >= 0) {
                    simd::cross_entropy_grad_row(lp.data() + r * in_stride, NNPLUG_DTYPE_F32, n, a[k], b[k],
                                                 nullptr, expected.data());
                    expected[static_cast<size_t>(target[k])] -= nll[k];
                }
                for (int64_t c = 0; c < n; ++c)
                    expect_near(out[static_cast<size_t>(r * out_stride + c)],
                                expected[static_cast<size_t>(c)], r, c);
            }
            expect_gaps_untouched(out, n, out_stride);
        }
    });
}

}  // namespace
