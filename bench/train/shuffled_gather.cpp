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

// The data set, the arena and the buffers one run measures with.
struct GatherBench {
    int64_t rows, features;
    int threads, reps;
    train::RowTable data;
    train::LabelBits labels;
    const float weights[2] = {0.75f, 1.25f};
    std::vector<float> w, logits;
    tbb::task_arena arena;

    GatherBench(int64_t rows_, int64_t features_, int threads_, int reps_, std::mt19937_64& random)
        : rows(rows_),
          features(features_),
          threads(threads_),
          reps(reps_),
          data(rows_, features_),
          labels(rows_),
          w(static_cast<size_t>(features_), 0.5f),
          logits(static_cast<size_t>(rows_)),
          arena(threads_) {
        std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
        for (int64_t i = 0; i < rows; ++i) {
            for (int64_t j = 0; j < features; ++j) data.row(i)[j] = uniform(random);
            if (random() & 1) labels.set(i);
        }
    }

    double gather(const std::vector<int64_t>& order, int64_t begin, int64_t end, int64_t ahead_end) {
        return gather_rows(data, labels, weights, order.data(), begin, end, ahead_end, w.data(),
                           logits.data());
    }

    // One epoch over `order` in one parallel read.
    double read_epoch(const std::vector<int64_t>& order) {
        return arena.execute([&] {
            return tbb::parallel_reduce(
                tbb::blocked_range<int64_t>(0, rows, 4096), 0.0,
                [&](const tbb::blocked_range<int64_t>& r, double sum) {
                    return sum + gather(order, r.begin(), r.end(), rows);
                },
                [](double a, double b) { return a + b; }, tbb::static_partitioner());
        });
    }

    // One epoch over `order` step by step, each step cut into chunks as the trainer cuts it.
    double read_epoch_in_steps(const std::vector<int64_t>& order, int64_t step_rows) {
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
                            sum += gather(order, begin, std::min(last, begin + chunk_rows), last);
                        }
                        return sum;
                    },
                    [](double a, double b) { return a + b; });
            });
        }
        return total;
    }

    // The best rows/s of `reps` epochs over `order`, and their checksum.
    std::pair<double, double> best_rate(const std::vector<int64_t>& order) {
        double best = 0, checksum = 0;
        for (int rep = 0; rep < reps; ++rep) {
            const auto start = std::chrono::steady_clock::now();
            checksum += read_epoch(order);
            const double seconds =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            best = std::max(best, static_cast<double>(rows) / seconds);
        }
        return {best, checksum};
    }

    // Each step size: the order drawn as the trainer draws it, then read in steps.
    void measure_steps(const std::vector<int64_t>& step_sizes) {
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
                checksum += read_epoch_in_steps(epoch_order.order(), step_rows);
                const double seconds =
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
                best = std::max(best, static_cast<double>(rows) / seconds);
            }
            std::printf("drawn and read in steps of %lld rows/s %.4g (checksum %.6g)\n",
                        static_cast<long long>(step_rows), best, checksum);
        }
        std::printf("order draw seconds %.4g\n", best_draw);
    }
};

int run(int argc, char** argv) {
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

    std::mt19937_64 random(1);
    GatherBench bench(rows, features, threads, reps, random);
    std::vector<int64_t> in_order(static_cast<size_t>(rows)), shuffled(static_cast<size_t>(rows));
    std::iota(in_order.begin(), in_order.end(), 0);
    shuffled = in_order;
    std::shuffle(shuffled.begin(), shuffled.end(), random);

    const auto [shuffled_rate, shuffled_sum] = bench.best_rate(shuffled);
    const auto [in_order_rate, in_order_sum] = bench.best_rate(in_order);
    std::printf("rows %lld, %lld bytes a row, %d threads, best of %d\n", static_cast<long long>(rows),
                static_cast<long long>(bench.data.stride()) * 4, threads, reps);
    std::printf("shuffled rows/s %.4g\n", shuffled_rate);
    std::printf("in order rows/s %.4g\n", in_order_rate);
    if (!step_sizes.empty()) bench.measure_steps(step_sizes);
    // The sums, so that no compiler drops the reads; equal up to rounding.
    std::printf("checksums %.6g %.6g\n", shuffled_sum, in_order_sum);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "nnplug_shuffled_gather: %s\n", error.what());
    } catch (...) {
        std::fprintf(stderr, "nnplug_shuffled_gather: an unknown exception\n");
    }
    return 1;
}
