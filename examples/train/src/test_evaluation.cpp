#include "test_evaluation.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>

#include "batch_rows.h"

namespace train {

TestEvaluator::TestEvaluator(const TrainingData& data, LossKind kind, std::optional<float> ops_pos_weight,
                             tbb::task_arena& arena)
    : data_(data),
      arena_(arena),
      chunk_rows_(std::min<int64_t>(data.test_rows(), 1 << 16)),
      loss_(chunk_rows_, kind, ops_pos_weight),
      sample_losses_(static_cast<size_t>(chunk_rows_)) {}

TestEvaluation TestEvaluator::run(Model& model) {
    const int64_t test_rows = data_.test_rows();
    const TrainTestSplit& split = data_.split;
    TestEvaluation result;
    result.scores.resize(static_cast<size_t>(test_rows));
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
        std::copy(model.probabilities_data(), model.probabilities_data() + rows,
                  result.scores.data() + start);
        loss_.run_samples(model.outputs(), split.test.labels.data() + start,
                          data_.test_weights.data() + start, rows, sample_losses_.data(), nullptr, 0.0f);
        for (int64_t i = 0; i < rows; ++i)
            loss_sum += static_cast<double>(sample_losses_[static_cast<size_t>(i)]);
    }
    result.loss = loss_sum / static_cast<double>(test_rows);
    result.confusion.add(result.scores.data(), split.test.labels.data(), test_rows);
    result.roc_auc = roc_auc(result.scores.data(), split.test.labels.data(), test_rows);
    return result;
}

}  // namespace train
