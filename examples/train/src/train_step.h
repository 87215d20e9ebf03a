// The training loop's step: a batch's shards forward, the loss and its gradient on the
// device, backward; the shards' records summed along the tree (shard_tree.h) across the
// processes; the optimizer's update. Every buffer is made once, before the first step.
#pragma once

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "batch_rows.h"
#include "communicator.h"
#include "device_task_losses.h"
#include "model.h"
#include "optimizer.h"
#include "step_combine.h"
#include "training_data.h"

namespace train {

struct StepSetup {
    const TrainingData& data;
    Model& model;
    Optimizer& optimizer;
    Communicator& comm;
    tbb::task_arena& arena;
    LossSetup loss;      // the task's loss on the device
    int64_t batch_size;  // at most the training rows
    double weight_decay;
    int host_threads;         // the arena's
    int64_t evaluation_rows;  // the evaluation's chunk, which the model's buffers also hold
};

// What one step gives every process alike.
struct StepResult {
    int64_t stop = 0;  // the stop request agreed by every process (0: none, else a signal number)
    double loss_sum = 0;
    int64_t correct = 0;
};

class TrainStep {
public:
    explicit TrainStep(const StepSetup& setup);
    // One step over the batch's rows batch_index[0, rows); stop_request is this process's.
    StepResult run(const int64_t* batch_index, int64_t rows, int64_t stop_request);

    int64_t rows_per_shard() const { return rows_per_shard_; }
    int64_t max_shards() const { return max_shards_; }

private:
    DeviceLoss& thread_loss();
    // The chunk's targets (and, binary, sample weights) into the batch's buffers.
    void gather_targets(const int64_t* batch_index, int64_t begin, int64_t end);
    int64_t shard_correct(int64_t begin, int64_t end, int64_t group_begin) const;
    ShardRecord shard_record(int64_t s) {
        return record_at(aligned_start(shard_storage_) + (s - own_first_) * layout_.bytes);
    }
    void run_own_shards(const int64_t* batch_index, int64_t rows);
    // A group of this process's shards: its rows numbered from 0 for the model.
    struct Group {
        const int64_t* batch_index;  // the batch's, from its first row
        int64_t batch_rows;
        BatchRows rows;
        int64_t begin;       // its first row in the batch
        int64_t last_shard;  // one past its last shard
    };
    void run_chunk(const Group& group, int64_t first_shard);
    char* pack_own_blocks(const CombinePlan& plan, int64_t shards, int64_t stop_request);
    int64_t index_records(const CombinePlan& plan, const char* gathered, StepResult& result);
    double root_loss(int64_t shards) const;
    void update_parameters(int64_t shards);
    const char* node_record(int64_t first, int64_t size) const;
    const char* leaf_record(int64_t s) const;

    // body over [0, parameter_count) in ranges of about `grain` parameters: in parallel, or
    // on this thread when one range holds them all (a small model then makes no oneTBB
    // round trip).
    template <typename Body>
    void for_parameters(size_t grain, const Body& body) {
        const tbb::blocked_range<size_t> all(0, parameter_count_, grain);
        if (!all.is_divisible()) return body(all);
        arena_.execute([&] { tbb::parallel_for(all, body); });
    }

    const TrainingData& data_;
    Model& model_;
    Optimizer& optimizer_;
    Communicator& comm_;
    tbb::task_arena& arena_;
    const int ranks_;
    const size_t parameter_count_;
    const float weight_decay_;
    const int64_t rows_per_shard_, max_shards_, shards_per_group_, shards_per_chunk_;
    const ShardRecordLayout layout_;
    const BlockRecordLayout block_layout_;
    int32_t device_ = 0;
    const Task task_;
    const int64_t width_;                                     // the model's outputs per row
    std::vector<std::unique_ptr<DeviceLoss>> thread_losses_;  // one per thread of the arena
    // Buffers reused by every batch: no allocation inside the loop.
    std::vector<float> batch_targets_, batch_weights_, sample_losses_, grad_outputs_;
    // This process's shard records; its part of the combine (header and block records);
    // everyone's parts. A batch has one of two shard counts: a full one's or the last one's.
    std::vector<double> shard_storage_, send_storage_, receive_storage_;
    std::map<int64_t, CombinePlan> plans_;
    int64_t max_width_ = 0;
    // Every record of a step by tree node: level (log2 of its size) * width + its index
    // (level 0: the shard records of one-shard blocks).
    std::vector<const char*> node_records_;
    int64_t own_first_ = 0, own_last_ = 0;  // this process's shards of the current step
};

}  // namespace train
