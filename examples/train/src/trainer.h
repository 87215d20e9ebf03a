// The training loop: data preparation, mini-batch SGD/Adam with the loss on the device,
// evaluation, checkpoints, resume and the run's outputs.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "train_settings.h"

namespace train {

class Communicator;

// A batch is cut into shards of this many rows (the last may be shorter): at most
// kMaxShards per batch, a multiple of 64 rows (or the whole batch when it is smaller).
// It depends on the batch size only, never on the number of processes or threads; each
// shard's loss sum, correct count and gradient are computed alone and combined in shard
// order, which is why a run gives the same bytes whatever processes and threads do it.
constexpr int64_t kMaxShards = 256;
int64_t shard_rows(int64_t batch_size);

// A step runs its shards in groups of at most kGroupRows rows (the model's per-row buffers
// hold one group, or one chunk of the test split), a group's in chunks of whole shards,
// each run on one thread from start to end. chunk_shards gives the shards of a chunk: two
// chunks per thread, so that oneTBB can even out the threads, but at most 2048 rows (a
// chunk's copy of its rows stays in the core's second-level cache) and, for logistic
// regression, at least 512 (or the group): its rows are cheap enough that a device call's
// fixed cost would show. An MLP's are not; its chunks go down to a shard.
constexpr int64_t kGroupRows = 16384;
int64_t group_shards(int64_t batch_size);  // the most shards a group holds
int64_t chunk_shards(int64_t batch_size, int threads, bool logistic);

struct RunRequest {
    TrainSettings settings;
    std::string backend;  // for the report
    // The effective config, written to the run's folder as config.yaml once the run has
    // started (its data loaded, its checkpoint accepted): a run that fails before changes
    // nothing there.
    std::string config_text;
    std::optional<std::filesystem::path> resume_from;
    // Stop as SIGINT would after this many batches of this process (0: never); lets the
    // tests interrupt a run at a known point.
    int64_t interrupt_after_batches = 0;
    // The processes of a data-parallel run (null: this process alone). Rank 0 prints and
    // writes the outputs and checkpoints; every rank trains its part of every batch.
    Communicator* communicator = nullptr;
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
