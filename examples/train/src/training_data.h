// The data step of a run: the set loaded or generated, split, standardized with the
// training split's statistics and laid out for the training loop's shuffled reads.
#pragma once

#include <Eigen/Core>
#include <array>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "dataset.h"
#include "device_loss.h"
#include "row_table.h"
#include "task.h"
#include "train_settings.h"

namespace train {

struct TrainingData {
    TrainTestSplit split;       // its train.features moved into train_features
    RowTable train_features;    // standardized, in a table laid out for shuffled reads
    LabelBits train_labels{0};  // one bit per training row
    // A sample's weight from its label: the class weights, with bce's pos_weight folded in.
    std::array<float, 2> label_weights{};
    Eigen::VectorXf test_weights;
    std::pair<float, float> class_weights;  // as configured or derived, for the report
    std::optional<float> pos_weight;        // the positives' weight, when any
    uint64_t fingerprint = 0;               // of the whole set, before the split
    double load_seconds = 0;
    // The other tasks: what the loss takes per row (the class index, or the target
    // standardized with the training split's mean and scale), the multi-class loss's weight
    // of each class, and the regression target's standardization.
    Task task = Task::kBinary;
    std::vector<float> train_targets;
    std::vector<float> test_targets;
    std::vector<float> class_loss_weights;
    double target_mean = 0;
    double target_scale = 1;

    int64_t train_rows() const { return train_features.rows(); }
    int64_t test_rows() const { return split.test.rows(); }
    int64_t features() const { return train_features.columns(); }
};

// A binary set for the loss kind's ops (bce folds pos_weight into the sample weights).
TrainingData prepare_data(const TrainSettings& settings, LossKind loss_kind);
// The set of settings.task, for its loss.
TrainingData prepare_data(const TrainSettings& settings);

}  // namespace train
