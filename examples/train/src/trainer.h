// The training loop: data preparation, mini-batch SGD/Adam with the loss on the device,
// evaluation, checkpoints, resume and the run's outputs.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "train_settings.h"

namespace train {

struct RunRequest {
    TrainSettings settings;
    std::string backend;                             // for the report
    std::optional<std::filesystem::path> resume_from;
    // Stop as SIGINT would after this many batches of this process (0: never); lets the
    // tests interrupt a run at a known point.
    int64_t interrupt_after_batches = 0;
};

// Exit codes of a run.
constexpr int kRunFinished = 0;
constexpr int kRunInterruptedBySigint = 130;
constexpr int kRunInterruptedBySigterm = 143;

// SIGINT and SIGTERM stop the run after the current batch, with a checkpoint.
void install_stop_handlers();

// Runs between aclInit and aclFinalize; throws std::runtime_error on bad data, a refused
// checkpoint or a failing aclnn call. Returns one of the exit codes above.
int run_training(const RunRequest& request);

}  // namespace train
