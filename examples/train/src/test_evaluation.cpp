#include "test_evaluation.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>

#include "batch_rows.h"

namespace train {

TestEvaluator::TestEvaluator(const TrainingData& data, const LossSetup& loss, tbb::task_arena& arena)
    : data_(data),
      arena_(arena),
      chunk_rows_(std::min<int64_t>(data.test_rows(), 1 << 16)),
      loss_(make_device_loss(loss, chunk_rows_)),
      sample_losses_(static_cast<size_t>(chunk_rows_)) {}

// What the model predicts for test rows [start, start + rows), from its buffers: the
// probability of label 1, the class, or the value in the target's units.
void TestEvaluator::keep_predictions(const Model& model, int64_t start, int64_t rows,
                                     TestEvaluation& result) {
    if (data_.task == Task::kMulticlass) {
        std::copy(model.predicted_classes(), model.predicted_classes() + rows, predicted_.data() + start);
    } else if (data_.task == Task::kRegression) {
        for (int64_t i = 0; i < rows; ++i)
            result.predictions[static_cast<size_t>(start + i)] =
                static_cast<float>(data_.target_mean + data_.target_scale * model.outputs()[i]);
    } else {
        std::copy(model.probabilities_data(), model.probabilities_data() + rows,
                  result.scores.data() + start);
    }
}

TestEvaluation TestEvaluator::run(Model& model) {
    const int64_t test_rows = data_.test_rows();
    const TrainTestSplit& split = data_.split;
    TestEvaluation result;
    (data_.task == Task::kBinary ? result.scores : result.predictions).resize(static_cast<size_t>(test_rows));
    predicted_.resize(data_.task == Task::kMulticlass ? static_cast<size_t>(test_rows) : 0);
    double loss_sum = 0;
    for (int64_t start = 0; start < test_rows; start += chunk_rows_) {
        const int64_t rows = std::min(chunk_rows_, test_rows - start);
        const BatchRows chunk{split.test.features.row(start).data(), nullptr};
        // Fixed pieces, so that no row's arithmetic depends on how the threads split the work.
        constexpr int64_t kPiece = 4096;
        arena_.execute([&] {
            tbb::parallel_for(tbb::blocked_range<int64_t>(0, (rows + kPiece - 1) / kPiece, 1),
                              [&](const tbb::blocked_range<int64_t>& r) {
                                  for (int64_t piece = r.begin(); piece < r.end(); ++piece)
                                      model.forward_shard(chunk, piece * kPiece,
                                                          std::min(rows, (piece + 1) * kPiece));
                              });
        });
        keep_predictions(model, start, rows, result);
        // The binary losses take the labels and each sample's weight; the others their targets
        // (class indices, standardized values).
        const bool binary = data_.task == Task::kBinary;
        loss_->run_samples(
            model.outputs(), binary ? split.test.labels.data() + start : data_.test_targets.data() + start,
            binary ? data_.test_weights.data() + start : nullptr, rows, sample_losses_.data(), nullptr, 0.0f);
        for (int64_t i = 0; i < rows; ++i)
            loss_sum += static_cast<double>(sample_losses_[static_cast<size_t>(i)]);
    }
    result.loss = loss_sum / static_cast<double>(test_rows);
    if (data_.task == Task::kMulticlass) {
        result.classes = ClassConfusion(split.test.classes());
        result.classes.add(predicted_.data(), split.test.labels.data(), test_rows);
    } else if (data_.task == Task::kRegression) {
        result.errors = regression_errors(result.predictions.data(), split.test.labels.data(), test_rows);
    } else {
        result.confusion.add(result.scores.data(), split.test.labels.data(), test_rows);
        result.roc_auc = roc_auc(result.scores.data(), split.test.labels.data(), test_rows);
    }
    return result;
}

}  // namespace train
