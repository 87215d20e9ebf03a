// Data sets for classification (binary or of C classes) and regression: CSV loading, a
// synthetic generator, a deterministic split (stratified by class for classification) and
// standardization fitted on the training split.
#pragma once

#include <Eigen/Core>
#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "task.h"
#include "train_settings.h"

namespace train {

// Row-major so that one sample is one contiguous row: batches gather rows with memcpy.
using FeatureMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

struct Dataset {
    FeatureMatrix features;
    Eigen::VectorXf labels;  // binary: 0 or 1; multiclass: the class index; regression: the target
    std::array<std::string, 2> label_names{"0", "1"};  // binary
    std::string description;
    Task task = Task::kBinary;
    std::vector<std::string> class_names;  // multiclass: one per class, class 0 first

    int64_t rows() const { return features.rows(); }
    int64_t positives() const;
    // Classes of a classification set (2 for binary), 0 for regression.
    int64_t classes() const;
};

// format: auto, sklearn (header "rows,features,name0,name1", as the shipped file) or
// plain (an optional header line, then features followed by a 0/1 label). A malformed
// row throws std::runtime_error naming the file and line.
Dataset load_csv(const std::filesystem::path& path, const std::string& format);

// The same for a task's targets. multiclass: the label is a class index (a whole number from
// 0 to kMostClasses - 1), the classes are named by an sklearn header
// "rows,features,name0,name1,...", else by their indices, up to the largest label;
// regression: the label is any finite number (the sklearn format is for classes only).
constexpr int64_t kMostClasses = 1000;
Dataset load_csv(const std::filesystem::path& path, const std::string& format, Task task);

// A noisy linearly separable set: x ~ N(0, I), label = [x.w / |w| + noise * N(0,1) > 0].
Dataset make_synthetic(const SyntheticShape& shape, double noise, uint64_t seed);

struct TrainTestSplit {
    Dataset train;
    Dataset test;
};

// Shuffles each class with the seed and puts test_fraction of it (rounded) in test; a
// regression set is one group.
TrainTestSplit split_stratified(const Dataset& data, double test_fraction, uint64_t seed);

// Per-feature mean and standard deviation of the training split; constant features
// keep scale 1.
struct Standardizer {
    Eigen::RowVectorXf mean;
    Eigen::RowVectorXf scale;

    static Standardizer fit(const FeatureMatrix& features);
    void apply(FeatureMatrix& features) const;
};

// FNV-1a over the features and labels: tells whether a checkpoint was made on this data.
uint64_t data_fingerprint(const Dataset& data);

}  // namespace train
