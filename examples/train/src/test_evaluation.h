// The evaluation step: the model's loss, confusion matrix and ROC AUC on the test split,
// the loss on the device as in training.
#pragma once

#include <tbb/task_arena.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "classification_metrics.h"
#include "device_loss.h"
#include "model.h"
#include "training_data.h"

namespace train {

struct TestEvaluation {
    double loss = 0;
    ConfusionMatrix confusion;
    double roc_auc = 0;
    std::vector<float> scores;  // each test row's probability of the positive class
};

class TestEvaluator {
public:
    // Runs on this thread's device; the rows forward on the arena's threads.
    TestEvaluator(const TrainingData& data, LossKind kind, std::optional<float> ops_pos_weight,
                  tbb::task_arena& arena);
    // The test split in chunks of at most this many rows (the model's buffers must hold one).
    int64_t chunk_rows() const { return chunk_rows_; }
    TestEvaluation run(Model& model);

private:
    const TrainingData& data_;
    tbb::task_arena& arena_;
    int64_t chunk_rows_;
    DeviceBceLoss loss_;
    std::vector<float> sample_losses_;
};

}  // namespace train
