// A multilayer perceptron with ReLU hidden layers and one output, either the logit or its
// sigmoid (the probability of label 1); with no hidden layer it is logistic regression.
// Parameters and gradients live in one flat buffer each, so the optimizer and the
// checkpoint see a single array.
#pragma once

#include <Eigen/Core>

#include <cstdint>
#include <vector>

#include "dataset.h"
#include "random_stream.h"

namespace train {

// What the model emits: the sigmoid of the last layer (for aclnnBinaryCrossEntropy) or the
// last layer itself (for aclnnBinaryCrossEntropyWithLogits, which applies the sigmoid).
enum class ModelOutput { kProbability, kLogit };

class Model {
public:
    Model(int64_t inputs, const std::vector<int64_t>& hidden, ModelOutput output = ModelOutput::kProbability);

    // He-uniform weights for ReLU layers, Glorot-uniform for the output, zero biases.
    void initialize(RandomStream& random);

    // The model's outputs (probabilities or logits, as constructed) for `rows` row-major
    // samples; the batch is kept for backward.
    const Eigen::VectorXf& forward(const float* batch, int64_t rows);
    // Probabilities of label 1 of the last forward batch, 1 / (1 + exp(-logit)) in either
    // kind, for predictions and metrics.
    const Eigen::VectorXf& probabilities() const { return probabilities_; }
    // Gradients of the loss w.r.t. every parameter, from dLoss/dOutput of the last forward
    // batch: dLoss/dProbability (what aclnnBinaryCrossEntropyBackward returns) or
    // dLoss/dLogit (what aclnnBinaryCrossEntropyWithLogitsBackward returns).
    void backward(const float* grad_outputs);
    ModelOutput output() const { return output_; }
    // Adds decay * W to the weight gradients (L2 regularization; biases are left alone).
    void add_weight_decay(float decay);

    std::vector<float>& parameters() { return parameters_; }
    const std::vector<float>& parameters() const { return parameters_; }
    const std::vector<float>& gradients() const { return gradients_; }
    const std::vector<int64_t>& layer_sizes() const { return sizes_; }

private:
    using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    using Map = Eigen::Map<RowMatrix>;
    using ConstMap = Eigen::Map<const RowMatrix>;

    struct Layer {
        int64_t inputs;
        int64_t outputs;
        size_t weight_offset;  // outputs x inputs, row-major
        size_t bias_offset;
    };

    ModelOutput output_;
    std::vector<int64_t> sizes_;  // inputs, hidden..., 1
    std::vector<Layer> layers_;
    std::vector<float> parameters_;
    std::vector<float> gradients_;
    // Work buffers, reused across batches: layer outputs (after ReLU), their gradients.
    std::vector<RowMatrix> outputs_;
    std::vector<RowMatrix> deltas_;
    Eigen::VectorXf logits_;
    Eigen::VectorXf probabilities_;
    const float* input_ = nullptr;
    int64_t rows_ = 0;
};

}  // namespace train
