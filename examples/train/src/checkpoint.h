// Checkpoints of a training run: model, optimizer state, position in the run, random
// stream state and the metrics so far, written atomically and checked when read.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace train {

struct EpochMetrics {
    int64_t epoch = 0;
    double train_loss = 0;
    double train_accuracy = 0;
    double test_loss = 0;
    double test_accuracy = 0;
    double test_roc_auc = 0;
};

// What a run is: a checkpoint resumes only a run with the same identity.
struct RunIdentity {
    std::vector<std::pair<std::string, std::string>> settings;  // trajectory_settings()
    uint64_t data_fingerprint = 0;
    std::vector<int64_t> layer_sizes;
};

struct TrainingState {
    int64_t epochs_done = 0;
    int64_t batches_done = 0;          // in the epoch after epochs_done (0: at an epoch boundary)
    std::string epoch_start_random;    // shuffle stream state when that epoch began
    double partial_loss_sum = 0;       // sums over the batches_done batches
    int64_t partial_correct = 0;
    int64_t partial_seen = 0;
    std::vector<float> parameters;
    std::string optimizer_kind;
    int64_t optimizer_steps = 0;
    std::vector<float> optimizer_first;
    std::vector<float> optimizer_second;
    std::vector<EpochMetrics> history;
};

// Writes to a temporary file beside path, fsyncs it, renames it over path and fsyncs the
// folder: a crash leaves the old checkpoint or the new one, never half of one.
void write_checkpoint(const std::filesystem::path& path, const RunIdentity& identity, const TrainingState& state);

// Reads and verifies a checkpoint; throws std::runtime_error naming the file and what is
// wrong (not a checkpoint, another format version, corrupt, or made by another run).
TrainingState read_checkpoint(const std::filesystem::path& path, const RunIdentity& expected);

// Writes text to path through a temporary file and a rename.
void write_file_atomically(const std::filesystem::path& path, const std::string& bytes);

}  // namespace train
