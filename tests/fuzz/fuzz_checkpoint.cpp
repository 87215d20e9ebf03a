// libFuzzer target: the training example's checkpoint reader. The input is a checkpoint
// file's bytes. It is read as two runs would resume it: an MLP 3-2-1 with Adam and a
// logistic regression 3-1 with SGD, 50 training rows in batches of 16, 5 epochs. A
// checkpoint one of them accepts must encode back to the same bytes, and must then work
// the way nnplug_train uses it: the model takes its parameters, the optimizer and the
// shuffle stream their state, and the batches left in the epoch in progress are trained
// (rows gathered through the shuffled order, forward, backward, an optimizer step) and
// summed into the epoch's metrics, which are drawn as metrics.csv and SVG. The checksum is
// no obstacle: the fuzzer's mutations are given a valid one (see LLVMFuzzerCustomMutator),
// so the checks of the fields are what is exercised.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "checkpoint.h"
#include "model.h"
#include "optimizer.h"
#include "random_stream.h"
#include "run_report.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

[[noreturn]] void broken(const std::string& what) {
    std::fprintf(stderr, "fuzz_checkpoint: contract broken: %s\n", what.c_str());
    std::abort();
}

constexpr size_t kHeader = 20;  // magic, version, payload size
constexpr size_t kTrailer = 8;  // FNV-1a of the payload

uint64_t fnv1a(const uint8_t* bytes, size_t count) {
    uint64_t hash = 1469598103934665603ULL;
    for (size_t i = 0; i < count; ++i) hash = (hash ^ bytes[i]) * 1099511628211ULL;
    return hash;
}

// A run that could resume a checkpoint: what the trainer passes to read_checkpoint.
struct Run {
    train::RunIdentity identity;
    train::ResumeBounds bounds;
    std::vector<int64_t> hidden;
    train::TrainSettings settings;
};

std::vector<Run> make_runs() {
    std::vector<Run> runs(2);
    for (size_t i = 0; i < runs.size(); ++i) {
        Run& run = runs[i];
        const bool mlp = i == 0;
        run.hidden = mlp ? std::vector<int64_t>{2} : std::vector<int64_t>{};
        run.settings.optimizer = mlp ? "adam" : "sgd";
        run.settings.model_kind = mlp ? "mlp" : "logistic";
        run.settings.hidden = run.hidden;
        run.settings.epochs = 5;
        run.settings.batch_size = 16;
        run.identity.settings = {{"model.kind", run.settings.model_kind},
                                 {"optimizer.kind", run.settings.optimizer}};
        run.identity.data_fingerprint = 0x5eed;
        run.identity.layer_sizes = mlp ? std::vector<int64_t>{3, 2, 1} : std::vector<int64_t>{3, 1};
        run.bounds.epochs = 5;
        run.bounds.train_rows = 50;
        run.bounds.batch_size = 16;
        run.bounds.parameter_count = mlp ? 3 * 2 + 2 + 2 * 1 + 1 : 3 + 1;
        run.bounds.optimizer_kind = run.settings.optimizer;
    }
    return runs;
}

const std::vector<Run>& runs() {
    static const std::vector<Run> list = make_runs();
    return list;
}

// What trainer.cpp does with an accepted checkpoint, on 50 rows of 3 features.
void resume(const Run& run, const train::TrainingState& state) {
    train::Model model(3, run.hidden, train::ModelOutput::kLogit);
    if (model.parameters().size() != run.bounds.parameter_count)
        broken("the fuzzer's parameter count is wrong");
    model.parameters() = state.parameters;
    train::Optimizer optimizer(run.settings, model.parameters().size());
    if (!optimizer.restore(state.optimizer_kind, state.optimizer_steps, state.optimizer_first,
                           state.optimizer_second))
        broken("read_checkpoint accepted an optimizer state the optimizer refuses");
    train::RandomStream shuffle(1);
    if (!shuffle.restore(state.epoch_start_random))
        broken("read_checkpoint accepted a shuffle stream state the stream refuses");

    const int64_t rows_total = run.bounds.train_rows, batch_size = run.bounds.batch_size;
    std::vector<float> features(static_cast<size_t>(rows_total * 3)), labels(static_cast<size_t>(rows_total));
    for (size_t i = 0; i < features.size(); ++i) features[i] = static_cast<float>(i % 7) * 0.25f - 0.75f;
    for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<float>(i % 2);
    std::vector<int64_t> order(static_cast<size_t>(rows_total));
    std::iota(order.begin(), order.end(), 0);
    shuffle.shuffle(order.data(), order.size());

    train::TrainingState progress = state;
    std::vector<train::EpochMetrics> history = state.history;
    if (state.epochs_done < run.bounds.epochs) {
        if (progress.batches_done == 0)
            progress.partial_loss_sum = 0, progress.partial_correct = 0, progress.partial_seen = 0;
        std::vector<float> batch(static_cast<size_t>(batch_size * 3)), grads(static_cast<size_t>(batch_size));
        for (int64_t b = state.batches_done; b < run.bounds.batches_per_epoch(); ++b) {
            const int64_t first = b * batch_size;
            const int64_t rows = std::min(batch_size, rows_total - first);
            for (int64_t i = 0; i < rows; ++i) {
                const int64_t source = order[static_cast<size_t>(first + i)];
                std::memcpy(&batch[static_cast<size_t>(i * 3)], &features[static_cast<size_t>(source * 3)],
                            3 * sizeof(float));
                grads[static_cast<size_t>(i)] = 0.1f - labels[static_cast<size_t>(source)];
            }
            model.forward(batch.data(), rows);
            model.backward(grads.data());
            optimizer.step(model.parameters(), model.gradients());
            progress.partial_seen += rows;
            progress.partial_loss_sum += 0.5 * static_cast<double>(rows);
        }
        train::EpochMetrics metrics;
        metrics.epoch = state.epochs_done + 1;
        metrics.train_loss = progress.partial_loss_sum / static_cast<double>(progress.partial_seen);
        metrics.train_accuracy =
            static_cast<double>(progress.partial_correct) / static_cast<double>(progress.partial_seen);
        history.push_back(metrics);
    }
    if (!history.empty()) {
        (void)train::metrics_csv(history);
        (void)train::training_curves_svg(history, "fuzz");
    }
}

}  // namespace

// Mutations keep the checksum valid (7 times in 8; and half of the time the header's payload
// size): otherwise nearly every mutant would stop at the checksum and the fields' checks
// would go unexercised. Anyone editing a checkpoint can do the same.
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
    size = LLVMFuzzerMutate(data, size, max_size);
    if (size < kHeader + kTrailer || seed % 8 == 7) return size;  // some mutants keep a wrong checksum
    const size_t payload = size - kHeader - kTrailer;
    if (seed % 2 == 0) {
        const uint64_t announced = payload;
        std::memcpy(data + 12, &announced, sizeof announced);
    }
    const uint64_t checksum = fnv1a(data + kHeader, payload);
    std::memcpy(data + size - kTrailer, &checksum, sizeof checksum);
    return size;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    int accepted = 0;
    for (const Run& run : runs()) {
        train::TrainingState state;
        try {
            state = train::parse_checkpoint(bytes, "fuzz.bin", run.identity, run.bounds);
        } catch (const std::runtime_error& error) {
            if (std::strstr(error.what(), "fuzz.bin") == nullptr)
                broken(std::string("a refusal without the file's name: ") + error.what());
            continue;
        }
        ++accepted;
        // The identity as stored (it may hold settings this run does not ask about).
        const train::RunIdentity stored = train::decode_checkpoint(bytes, "fuzz.bin").first;
        if (train::encode_checkpoint(stored, state) != bytes)
            broken("an accepted checkpoint does not encode back to its bytes");
        resume(run, state);
    }
    if (accepted > 1) broken("one checkpoint fits two different runs");
    return 0;
}
