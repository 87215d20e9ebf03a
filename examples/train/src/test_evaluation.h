// The evaluation step: the model's loss on the test split, on the device as in training,
// and the task's metrics: a binary confusion matrix and ROC AUC, a C x C confusion matrix,
// or a regression's errors in the target's units.
#pragma once

#include <tbb/task_arena.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "classification_metrics.h"
#include "device_task_losses.h"
#include "model.h"
#include "training_data.h"

namespace train {

struct TestEvaluation {
    double loss = 0;
    ConfusionMatrix confusion;
    double roc_auc = 0;
    std::vector<float> scores;  // binary: each test row's probability of the positive class
    ClassConfusion classes;     // multiclass
    // regression: each test row's prediction in the target's units, and the errors
    std::vector<float> predictions;
    RegressionErrors errors;
};

class TestEvaluator {
public:
    // Runs on this thread's device; the rows forward on the arena's threads.
    TestEvaluator(const TrainingData& data, const LossSetup& loss, tbb::task_arena& arena);
    // The test split in chunks of at most this many rows (the model's buffers must hold one).
    int64_t chunk_rows() const { return chunk_rows_; }
    TestEvaluation run(Model& model);

private:
    void keep_predictions(const Model& model, int64_t start, int64_t rows, TestEvaluation& result);
    const TrainingData& data_;
    tbb::task_arena& arena_;
    int64_t chunk_rows_;
    std::unique_ptr<DeviceLoss> loss_;
    std::vector<float> sample_losses_;
    std::vector<int32_t> predicted_;  // multiclass: each test row's class
};

}  // namespace train
