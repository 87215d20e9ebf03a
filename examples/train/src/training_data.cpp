#include "training_data.h"

#include <fmt/format.h>
#include <nnplug/escaped_text.h>

#include <chrono>
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
                   : load_csv(settings.data_path, settings.data_format);
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

}  // namespace

TrainingData prepare_data(const TrainSettings& settings, LossKind loss_kind) {
    const auto load_start = std::chrono::steady_clock::now();
    TrainingData result;
    Dataset data = load_data(settings);
    result.fingerprint = data_fingerprint(data);
    result.split = split_stratified(data, settings.test_fraction, settings.seed);
    data = Dataset{};  // the split holds copies
    TrainTestSplit& split = result.split;
    const Standardizer standardizer = Standardizer::fit(split.train.features);
    standardizer.apply(split.train.features);
    standardizer.apply(split.test.features);
    const int64_t train_rows = split.train.rows();
    result.train_features = RowTable(split.train.features.data(), train_rows, split.train.features.cols());
    split.train.features = FeatureMatrix();
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
