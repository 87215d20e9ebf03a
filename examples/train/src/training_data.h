// The data step of a run: the set loaded or generated, split, standardized with the
// training split's statistics and laid out for the training loop's shuffled reads.
#pragma once

#include <Eigen/Core>
#include <array>
#include <cstdint>
#include <optional>
#include <utility>

#include "dataset.h"
#include "device_loss.h"
#include "row_table.h"
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

    int64_t train_rows() const { return train_features.rows(); }
    int64_t test_rows() const { return split.test.rows(); }
    int64_t features() const { return train_features.columns(); }
};

TrainingData prepare_data(const TrainSettings& settings, LossKind loss_kind);

}  // namespace train
