// The least work of a training epoch over a shuffled data set: read every row once, in a
// random order, and take one dot product of its features (plus its label and weight).
// The rows sit as the training example keeps them (row_table.h: cache-line rows in huge
// pages, labels as bytes, a weight per label). No trainer that visits rows in that order
// can run faster on this machine; the same rows read in order show what the random order
// costs. compare_with_pytorch.py prints both beside nnplug_train's samples/s.
//
//   nnplug_shuffled_gather --rows 800000 --features 64 --threads 2
#include <CLI/CLI.hpp>
#include <tbb/blocked_range.h>
#include <tbb/parallel_reduce.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

// The training example's:
#include "prefetch_line.h"
#include "row_dot.h"
#include "row_table.h"

namespace {

// Sum over rows order[begin, end) of (features . w) * weight[label]; row i starts at
// rows + i * stride and holds `features` floats. Rows (and their labels) `ahead` places on
// are prefetched: one row per dot product leaves too few loads in flight otherwise.
inline double gather_range(const float* rows, int64_t stride, int64_t features, const uint8_t* labels, const float* weights,
                    const int64_t* order, int64_t begin, int64_t end, const float* w, int64_t ahead) {
    const int64_t row_bytes = features * static_cast<int64_t>(sizeof(float));
    double total = 0;
    for (int64_t k = begin; k < end; ++k) {
        if (k + ahead < end) {
            const int64_t next_row = order[k + ahead];
            const char* next = reinterpret_cast<const char*>(rows + next_row * stride);
            for (int64_t offset = 0; offset < row_bytes; offset += 64) train::prefetch_line(next + offset);
            train::prefetch_line(reinterpret_cast<const char*>(labels + next_row));
        }
        const int64_t row = order[k];
        total += static_cast<double>(train::dot<false>(rows + row * stride, w, features) * weights[labels[row]]);
    }
    return total;
}

// gather_range with the row width laid out at compile time where it is a common one, as
// the training example's model has it.
double gather_rows(const float* rows, int64_t stride, int64_t features, const uint8_t* labels, const float* weights,
                   const int64_t* order, int64_t begin, int64_t end, const float* w, int64_t ahead) {
    double total = 0;
    train::with_row_width(features, [&](auto width) {
        total = gather_range(rows, stride, width ? width() : features, labels, weights, order, begin, end, w, ahead);
    });
    return total;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"Rows per second of the least work of a shuffled training epoch"};
    int64_t rows = 800000, features = 64, ahead = 32;
    int threads = 2, reps = 5;
    app.add_option("--rows", rows, "rows of the data set")->check(CLI::PositiveNumber);
    app.add_option("--features", features, "features per row")->check(CLI::PositiveNumber);
    app.add_option("--threads", threads, "oneTBB threads")->check(CLI::PositiveNumber);
    app.add_option("--reps", reps, "epochs of each order; the fastest counts")->check(CLI::PositiveNumber);
    app.add_option("--ahead", ahead, "rows prefetched ahead")->check(CLI::NonNegativeNumber);
    CLI11_PARSE(app, argc, argv);

    train::RowTable data(rows, features);
    std::vector<uint8_t> labels(static_cast<size_t>(rows));
    const float weights[2] = {0.75f, 1.25f};
    std::mt19937_64 random(1);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    for (int64_t i = 0; i < rows; ++i) {
        for (int64_t j = 0; j < features; ++j) data.row(i)[j] = uniform(random);
        labels[static_cast<size_t>(i)] = random() & 1;
    }
    std::vector<float> w(static_cast<size_t>(features), 0.5f);
    std::vector<int64_t> in_order(static_cast<size_t>(rows)), shuffled(static_cast<size_t>(rows));
    std::iota(in_order.begin(), in_order.end(), 0);
    shuffled = in_order;
    std::shuffle(shuffled.begin(), shuffled.end(), random);

    tbb::task_arena arena(threads);
    const auto best_rate = [&](const std::vector<int64_t>& order) {
        double best = 0, checksum = 0;
        for (int rep = 0; rep < reps; ++rep) {
            const auto start = std::chrono::steady_clock::now();
            checksum += arena.execute([&] {
                return tbb::parallel_reduce(
                    tbb::blocked_range<int64_t>(0, rows, 4096), 0.0,
                    [&](const tbb::blocked_range<int64_t>& r, double sum) {
                        return sum + gather_rows(data.data(), data.stride(), features, labels.data(), weights,
                                                 order.data(), r.begin(), r.end(), w.data(), ahead);
                    },
                    [](double a, double b) { return a + b; }, tbb::static_partitioner());
            });
            const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            best = std::max(best, static_cast<double>(rows) / seconds);
        }
        return std::pair<double, double>{best, checksum};
    };
    const auto [shuffled_rate, shuffled_sum] = best_rate(shuffled);
    const auto [in_order_rate, in_order_sum] = best_rate(in_order);
    std::printf("rows %lld, %lld bytes a row, %d threads, best of %d\n", static_cast<long long>(rows),
                static_cast<long long>(data.stride() * 4), threads, reps);
    std::printf("shuffled rows/s %.4g\n", shuffled_rate);
    std::printf("in order rows/s %.4g\n", in_order_rate);
    // The sums, so that no compiler drops the reads; equal up to rounding.
    std::printf("checksums %.6g %.6g\n", shuffled_sum, in_order_sum);
    return 0;
}
