// Checkpoints of a training run: model, optimizer state, position in the run, random
// stream state and the metrics so far, written atomically and checked when read.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "task.h"

namespace train {

// One epoch's metrics. The fields keep the binary task's names (and checkpoints their
// layout); a regression, which has no accuracy, keeps the test RMSE in test_accuracy and the
// test MAE in test_roc_auc (both in the target's units; train_accuracy 0); a multi-class
// run has no ROC AUC (0).
struct EpochMetrics {
    int64_t epoch = 0;
    double train_loss = 0;
    double train_accuracy = 0;
    double test_loss = 0;
    double test_accuracy = 0;
    double test_roc_auc = 0;

    double test_rmse() const { return test_accuracy; }
    double test_mae() const { return test_roc_auc; }
};

// What a run is: a checkpoint resumes only a run with the same identity.
struct RunIdentity {
    std::vector<std::pair<std::string, std::string>> settings;  // trajectory_settings()
    uint64_t data_fingerprint = 0;
    std::vector<int64_t> layer_sizes;
};

struct TrainingState {
    int64_t epochs_done = 0;
    int64_t batches_done = 0;        // in the epoch after epochs_done (0: at an epoch boundary)
    std::string epoch_start_random;  // shuffle stream state when that epoch began
    double partial_loss_sum = 0;     // sums over the batches_done batches
    int64_t partial_correct = 0;
    int64_t partial_seen = 0;
    std::vector<float> parameters;
    std::string optimizer_kind;
    int64_t optimizer_steps = 0;
    std::vector<float> optimizer_first;
    std::vector<float> optimizer_second;
    std::vector<EpochMetrics> history;
};

// What the resuming run is shaped like. The checksum only catches accidents (anyone can
// recompute it), so every field of a checkpoint is checked against these before it is used.
struct ResumeBounds {
    int64_t epochs = 0;          // train.epochs of this run: epochs_done is 0 to epochs
    int64_t train_rows = 0;      // rows of the training split (>= 1)
    int64_t batch_size = 0;      // rows per batch, at most train_rows (the last batch may be short)
    size_t parameter_count = 0;  // the model's parameters, from its layer sizes
    std::string optimizer_kind;  // adam or sgd
    Task task = Task::kBinary;   // what the history's metrics are

    int64_t batches_per_epoch() const { return (train_rows + batch_size - 1) / batch_size; }
};

// The file's bytes: magic, format version, payload size, payload, FNV-1a checksum.
std::string encode_checkpoint(const RunIdentity& identity, const TrainingState& state);

// The identity and state as stored, after checking the header, the size, the checksum and
// that the payload holds exactly its fields; the values themselves are not checked (for
// tests and tools). Throws std::runtime_error naming `file`.
std::pair<RunIdentity, TrainingState> decode_checkpoint(const std::string& bytes, const std::string& file);

// decode_checkpoint, then the identity against `expected` (another run is refused with the
// setting that differs), then every field against `bounds` and against each other: the
// position (epochs_done, batches_done), the shuffle stream's state, the partial sums of the
// epoch in progress, the parameter and optimizer vectors' lengths, the optimizer's kind
// and step count, finite values, and the history of one row per epoch done. Throws
// std::runtime_error "checkpoint '<file>' is invalid: <field> ..." for the first field
// that is wrong.
TrainingState parse_checkpoint(const std::string& bytes, const std::string& file, const RunIdentity& expected,
                               const ResumeBounds& bounds);

// Writes the checkpoint with write_file_atomically (safe_file.h): a crash leaves the old
// checkpoint or the new one, never half of one.
void write_checkpoint(const std::filesystem::path& path, const RunIdentity& identity,
                      const TrainingState& state);

// The largest checkpoint a run within bounds writes: 1 MiB for the header, the identity and
// the shuffle stream's state, plus 12 bytes per parameter and a row of metrics per epoch.
int64_t largest_checkpoint_bytes(const ResumeBounds& bounds);

// Reads a checkpoint and checks it as parse_checkpoint does; throws std::runtime_error
// naming the file and what is wrong (not a regular file, larger than
// largest_checkpoint_bytes, not a checkpoint, another format version, corrupt, made by
// another run, or a field that does not fit this run).
TrainingState read_checkpoint(const std::filesystem::path& path, const RunIdentity& expected,
                              const ResumeBounds& bounds);

}  // namespace train
