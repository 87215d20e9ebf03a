#include "training_data.h"

#include <fmt/format.h>
#include <nnplug/escaped_text.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <new>
#include <stdexcept>
#include <system_error>

namespace train {
namespace {

// Weight of each sample from its label.
Eigen::VectorXf sample_weights(const Eigen::VectorXf& labels, const std::array<float, 2>& label_weights) {
    Eigen::VectorXf weights(labels.size());
    for (Eigen::Index i = 0; i < labels.size(); ++i)
        weights[i] = labels[i] == 1.0f ? label_weights[1] : label_weights[0];
    return weights;
}

// The data set, generated or read; a failed allocation is named with the data set's size.
Dataset load_data(const TrainSettings& settings) {
    try {
        return settings.synthetic
                   ? make_synthetic(*settings.synthetic, settings.synthetic_noise, settings.seed)
                   : load_csv(settings.data_path, settings.data_format, task_named(settings.task));
    } catch (const std::bad_alloc&) {
        if (!settings.synthetic) {
            std::error_code ignored;
            throw std::runtime_error(
                fmt::format("cannot allocate memory to read the data file '{}' ({} bytes) (out of memory)",
                            nnplug::escaped(settings.data_path.string()),
                            std::filesystem::file_size(settings.data_path, ignored)));
        }
        const SyntheticShape& shape = *settings.synthetic;
        throw std::runtime_error(
            fmt::format("cannot allocate the synthetic data set: {} rows x {} features take {} bytes as "
                        "float32 (out of memory)",
                        shape.rows, shape.features, 4 * shape.rows * shape.features));
    }
}

// The set loaded, split and standardized, its training features in the row table.
void load_and_split(const TrainSettings& settings, TrainingData& result) {
    Dataset data = load_data(settings);
    result.task = data.task;
    result.fingerprint = data_fingerprint(data);
    result.split = split_stratified(data, settings.test_fraction, settings.seed);
    data = Dataset{};  // the split holds copies
    TrainTestSplit& split = result.split;
    const Standardizer standardizer = Standardizer::fit(split.train.features);
    standardizer.apply(split.train.features);
    standardizer.apply(split.test.features);
    result.train_features =
        RowTable(split.train.features.data(), split.train.rows(), split.train.features.cols());
    split.train.features = FeatureMatrix();
}

// A class's weight in the multi-class loss: 1, or scikit-learn's balanced n / (C * count)
// (the split's features are in the row table by now: its labels count the rows).
std::vector<float> class_loss_weights(const std::string& spec, const Dataset& train) {
    const auto classes = static_cast<size_t>(train.classes());
    std::vector<float> weights(classes, 1.0f);
    if (spec != "balanced") return weights;
    std::vector<int64_t> counts(classes, 0);
    for (Eigen::Index i = 0; i < train.labels.size(); ++i) ++counts[static_cast<size_t>(train.labels[i])];
    for (size_t c = 0; c < classes; ++c)
        if (counts[c] > 0)
            weights[c] = static_cast<float>(static_cast<double>(train.labels.size()) /
                                            (static_cast<double>(classes) * static_cast<double>(counts[c])));
    return weights;
}

// Multi-class and regression targets as the loss takes them.
void prepare_targets(const TrainSettings& settings, TrainingData& result) {
    const Dataset& train = result.split.train;
    const Dataset& test = result.split.test;
    result.train_targets.assign(train.labels.data(), train.labels.data() + train.labels.size());
    result.test_targets.assign(test.labels.data(), test.labels.data() + test.labels.size());
    if (result.task == Task::kMulticlass) {
        result.class_loss_weights = class_loss_weights(settings.class_weights, train);
        return;
    }
    // The target standardized as the features are (in double, with the training split's
    // statistics): the model's output then starts at the right scale, whatever the units.
    double sum = 0, squares = 0;
    for (const float y : result.train_targets) sum += y;
    result.target_mean = sum / static_cast<double>(result.train_targets.size());
    for (const float y : result.train_targets) squares += (y - result.target_mean) * (y - result.target_mean);
    const double scale = std::sqrt(squares / static_cast<double>(result.train_targets.size()));
    result.target_scale = scale > 0 ? scale : 1.0;
    for (auto* targets : {&result.train_targets, &result.test_targets})
        for (float& y : *targets) y = static_cast<float>((y - result.target_mean) / result.target_scale);
}

}  // namespace

TrainingData prepare_data(const TrainSettings& settings) {
    if (task_named(settings.task) == Task::kBinary) return prepare_data(settings, loss_kind(settings.loss));
    const auto load_start = std::chrono::steady_clock::now();
    TrainingData result;
    load_and_split(settings, result);
    prepare_targets(settings, result);
    result.train_labels = LabelBits(0);
    result.load_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();
    return result;
}

TrainingData prepare_data(const TrainSettings& settings, LossKind loss_kind) {
    const auto load_start = std::chrono::steady_clock::now();
    TrainingData result;
    load_and_split(settings, result);
    TrainTestSplit& split = result.split;
    const int64_t train_rows = result.train_rows();
    const int64_t positives = split.train.positives();
    result.class_weights = class_weight_values(settings.class_weights, train_rows - positives, positives);
    result.pos_weight = pos_weight_value(settings.pos_weight, train_rows - positives, positives);
    // bce_with_logits hands pos_weight to the ops as posWeight. aclnnBinaryCrossEntropy has
    // none; for 0/1 labels posWeight p is the same as multiplying the positives' weights by
    // p, so bce folds it into the sample weights and both losses train on the same objective.
    result.label_weights = {result.class_weights.first, result.class_weights.second};
    if (result.pos_weight && loss_kind == LossKind::kBce) result.label_weights[1] *= *result.pos_weight;
    // Each training label as one bit (row_table.h); a sample's weight follows from its label.
    result.train_labels = LabelBits(split.train.labels.size());
    for (Eigen::Index i = 0; i < split.train.labels.size(); ++i)
        if (split.train.labels[i] == 1.0f) result.train_labels.set(i);
    result.test_weights = sample_weights(split.test.labels, result.label_weights);
    result.load_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();
    return result;
}

}  // namespace train
