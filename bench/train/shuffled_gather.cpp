// The least work of a training epoch over a shuffled data set: read every row once, in a
// random order, and take one dot product of its features (plus its label and weight).
// The rows sit as the training example keeps them (row_table.h: cache-line rows in huge
// pages, labels as bits, a weight per label). No trainer that visits rows in that order
// can run faster on this machine; the same rows read in order show what the random order
// costs. With --step-rows, also the least work of an SGD epoch at that batch size: the
// epoch's order drawn as the training example draws it (epoch_order.h), then the rows read
// in steps of that many, each step's cut into chunks as the example cuts it and read in
// parallel, every thread joining at the step's end (a step's rows cannot be used before
// the weights the step before them gives). compare_with_pytorch.py prints these beside
// nnplug_train's samples/s.
//
//   nnplug_shuffled_gather --rows 800000 --features 64 --threads 2 --step-rows 256 4096
#include <tbb/blocked_range.h>
#include <tbb/parallel_reduce.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

// The training example's:
#include "epoch_order.h"
#include "row_kernels.h"
#include "row_table.h"
#include "trainer.h"

namespace {

// Sum over rows order[begin, end) of (features . w) * weight[label], read by the training
// example's forward loop (row_kernels.h: rows prefetched ahead, one dot product each, the
// reads running ahead up to order[ahead_end]) with the logits in `logits`.
double gather_rows(const train::RowTable& data, const train::LabelBits& labels, const float* weights,
                   const int64_t* order, int64_t begin, int64_t end, int64_t ahead_end, const float* w,
                   float* logits) {
    const train::BatchRows rows{data.data(), order, data.stride(), ahead_end};
    train::row_logits(rows, begin, end, data.columns(), w, 0.0f, logits, nullptr);
    double total = 0;
    for (int64_t k = begin; k < end; ++k) total += static_cast<double>(logits[k] * weights[labels[order[k]]]);
    return total;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"Rows per second of the least work of a shuffled training epoch"};
    int64_t rows = 800000, features = 64;
    int threads = 2, reps = 5;
    std::vector<int64_t> step_sizes;
    app.add_option("--rows", rows, "rows of the data set")->check(CLI::PositiveNumber);
    app.add_option("--features", features, "features per row")->check(CLI::PositiveNumber);
    app.add_option("--threads", threads, "oneTBB threads")->check(CLI::PositiveNumber);
    app.add_option("--reps", reps, "epochs of each order; the fastest counts")->check(CLI::PositiveNumber);
    app.add_option("--step-rows", step_sizes, "also draw an order and read it in steps of these many rows")
        ->check(CLI::PositiveNumber);
    CLI11_PARSE(app, argc, argv);

    train::RowTable data(rows, features);
    train::LabelBits labels(rows);
    const float weights[2] = {0.75f, 1.25f};
    std::mt19937_64 random(1);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    for (int64_t i = 0; i < rows; ++i) {
        for (int64_t j = 0; j < features; ++j) data.row(i)[j] = uniform(random);
        if (random() & 1) labels.set(i);
    }
    std::vector<float> w(static_cast<size_t>(features), 0.5f), logits(static_cast<size_t>(rows));
    std::vector<int64_t> in_order(static_cast<size_t>(rows)), shuffled(static_cast<size_t>(rows));
    std::iota(in_order.begin(), in_order.end(), 0);
    shuffled = in_order;
    std::shuffle(shuffled.begin(), shuffled.end(), random);

    tbb::task_arena arena(threads);
    // One epoch over `order`: in one parallel read (step_rows 0), or step by step.
    const auto read_epoch = [&](const std::vector<int64_t>& order, int64_t step_rows) {
        if (step_rows == 0)
            return arena.execute([&] {
                return tbb::parallel_reduce(
                    tbb::blocked_range<int64_t>(0, rows, 4096), 0.0,
                    [&](const tbb::blocked_range<int64_t>& r, double sum) {
                        return sum + gather_rows(data, labels, weights, order.data(), r.begin(), r.end(),
                                                 rows, w.data(), logits.data());
                    },
                    [](double a, double b) { return a + b; }, tbb::static_partitioner());
            });
        const int64_t chunk_rows =
            std::min(step_rows, train::chunk_shards(step_rows, threads, true) * train::shard_rows(step_rows));
        double total = 0;
        for (int64_t first = 0; first < rows; first += step_rows) {
            const int64_t last = std::min(rows, first + step_rows);
            total += arena.execute([&] {
                return tbb::parallel_reduce(
                    tbb::blocked_range<int64_t>(0, (last - first + chunk_rows - 1) / chunk_rows, 1), 0.0,
                    [&](const tbb::blocked_range<int64_t>& r, double sum) {
                        for (int64_t chunk = r.begin(); chunk < r.end(); ++chunk) {
                            const int64_t begin = first + chunk * chunk_rows;
                            sum += gather_rows(data, labels, weights, order.data(), begin,
                                               std::min(last, begin + chunk_rows), last, w.data(),
                                               logits.data());
                        }
                        return sum;
                    },
                    [](double a, double b) { return a + b; });
            });
        }
        return total;
    };
    const auto best_rate = [&](const std::vector<int64_t>& order) {
        double best = 0, checksum = 0;
        for (int rep = 0; rep < reps; ++rep) {
            const auto start = std::chrono::steady_clock::now();
            checksum += read_epoch(order, 0);
            const double seconds =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
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
    if (!step_sizes.empty()) {
        train::EpochOrder epoch_order(static_cast<size_t>(rows));
        epoch_order.draw(0, arena);  // the arena's workers started, the order's pages mapped
        double best_draw = 1e30;
        for (const int64_t step_rows : step_sizes) {
            double best = 0, checksum = 0;
            for (int rep = 0; rep < reps; ++rep) {
                const auto start = std::chrono::steady_clock::now();
                epoch_order.draw(static_cast<uint64_t>(rep) + 1, arena);
                const auto drawn = std::chrono::steady_clock::now();
                best_draw = std::min(best_draw, std::chrono::duration<double>(drawn - start).count());
                checksum += read_epoch(epoch_order.order(), step_rows);
                const double seconds =
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
                best = std::max(best, static_cast<double>(rows) / seconds);
            }
            std::printf("drawn and read in steps of %lld rows/s %.4g (checksum %.6g)\n",
                        static_cast<long long>(step_rows), best, checksum);
        }
        std::printf("order draw seconds %.4g\n", best_draw);
    }
    // The sums, so that no compiler drops the reads; equal up to rounding.
    std::printf("checksums %.6g %.6g\n", shuffled_sum, in_order_sum);
    return 0;
}
