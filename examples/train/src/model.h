// A multilayer perceptron with ReLU hidden layers and an output layer per task: one output,
// the logit or its sigmoid (the probability of label 1), for a binary classifier; C logits,
// or their log-softmax, for C classes; one value for a regression. With no hidden layer it
// is logistic, softmax or linear regression.
// Parameters and gradients live in one flat buffer each, so the optimizer and the
// checkpoint see a single array.
//
// A training step works on shards: contiguous ranges of the rows passed as a batch (a
// trainer may pass a batch part by part). forward_shard and backward_shard read the
// parameters only and write rows [begin, end) of per-row buffers (reserve), plus the
// shard's own gradient, so different shards may run on different threads at once. A
// shard's results depend only on its rows and its position among them, never on which
// thread or process computes it.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <vector>

#include "batch_rows.h"
#include "dataset.h"
#include "random_stream.h"

namespace train {

// What the model emits: the sigmoid of the last layer (for aclnnBinaryCrossEntropy), the
// last layer itself (logits: for aclnnBinaryCrossEntropyWithLogits, which applies the
// sigmoid, or C of them for aclnnCrossEntropyLoss, which applies the log-softmax), the
// log-softmax of C logits (for aclnnNLLLoss), or the last layer as a regression's value.
// kProbability and kLogit compute each row's sigmoid too (probabilities()), C outputs each
// row's class of the largest output (predicted_classes()).
enum class ModelOutput { kProbability, kLogit, kLogSoftmax, kValue };

class Model {
public:
    // `outputs` units in the last layer: 1, or C for kLogit and kLogSoftmax over C classes.
    Model(int64_t inputs, const std::vector<int64_t>& hidden, ModelOutput output = ModelOutput::kProbability,
          int64_t outputs = 1);

    // He-uniform weights for ReLU layers, Glorot-uniform for the output, zero biases.
    void initialize(RandomStream& random);

    // Sizes the per-row buffers for batches of up to `rows` samples and maps their pages
    // (the only allocation; shards never allocate).
    void reserve(int64_t rows);
    int64_t capacity() const { return capacity_; }

    // The model's outputs (probabilities or logits) and probabilities for batch rows
    // [begin, end) into outputs() and probabilities(). With an index, an MLP gathers its
    // rows first (logistic regression reads them in place).
    void forward_shard(const BatchRows& rows, int64_t begin, int64_t end);
    // The gradient of the loss w.r.t. every parameter over rows [begin, end), from
    // dLoss/dOutput of those rows (grad_outputs indexed by batch row), into `gradient`
    // (parameters().size() floats, overwritten). Needs forward_shard of the same rows.
    void backward_shard(const BatchRows& rows, const float* grad_outputs, int64_t begin, int64_t end,
                        float* gradient);
    // Per batch row, after forward_shard: what the loss takes, and sigmoid(logit).
    // outputs() holds width() values per row, row after row.
    const float* outputs() const { return output_values_.data(); }
    const float* probabilities_data() const { return probabilities_.data(); }
    const int32_t* predicted_classes() const { return predicted_.data(); }
    int64_t width() const { return sizes_.back(); }

    // A whole batch on the calling thread (one shard), for tests and tools: the model's
    // outputs for `rows` row-major samples; the batch is kept for backward.
    const Eigen::VectorXf& forward(const float* batch, int64_t rows);
    // Probabilities of label 1 of the last forward batch, 1 / (1 + exp(-logit)) in either
    // kind, for predictions and metrics.
    const Eigen::VectorXf& probabilities() const { return batch_probabilities_; }
    // Gradients of the loss w.r.t. every parameter, from dLoss/dOutput of the last forward
    // batch: dLoss/dProbability (what aclnnBinaryCrossEntropyBackward returns) or
    // dLoss/dLogit (what aclnnBinaryCrossEntropyWithLogitsBackward returns).
    void backward(const float* grad_outputs);
    ModelOutput output() const { return output_; }
    // Adds decay * W to the weight gradients (L2 regularization; biases are left alone).
    void add_weight_decay(float decay);
    // True for the parameters that weight decay applies to (weights, not biases).
    const std::vector<uint8_t>& decayed() const { return decayed_; }

    std::vector<float>& parameters() { return parameters_; }
    const std::vector<float>& parameters() const { return parameters_; }
    std::vector<float>& gradients() { return gradients_; }
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

    // The parameters, their gradients and decay flags, count of each; refused in the
    // program's own words (wrapped: the count did not fit in size_t) rather than bad_alloc.
    void allocate_parameters(size_t count, bool wrapped);
    void finish_rows(const float* logits, int64_t begin, int64_t end);
    void finish_class_rows(const float* logits, int64_t begin, int64_t end);
    // Logistic or linear regression: one output, a dot product per row (row_kernels.h).
    bool single_dot() const { return layers_.size() == 1 && sizes_.back() == 1; }
    // dLoss/d(last layer) of rows [begin, end) into deltas[0, end - begin).
    void output_deltas(const float* grad_outputs, int64_t begin, int64_t end, float* deltas) const;

    ModelOutput output_;
    std::vector<int64_t> sizes_;  // inputs, hidden..., outputs
    std::vector<Layer> layers_;
    std::vector<float> parameters_;
    std::vector<float> gradients_;
    std::vector<uint8_t> decayed_;
    // Per batch row, reused across batches: the gathered inputs (MLP with an index), layer
    // outputs (after ReLU), their gradients, the model's outputs and probabilities.
    int64_t capacity_ = 0;
    RowMatrix gathered_;
    std::vector<RowMatrix> activations_;
    std::vector<RowMatrix> deltas_;
    std::vector<float> output_values_;
    std::vector<float> probabilities_;
    std::vector<int32_t> predicted_;
    // forward()/backward(): the last whole batch.
    Eigen::VectorXf batch_outputs_;
    Eigen::VectorXf batch_probabilities_;
    BatchRows last_rows_;
    int64_t last_count_ = 0;
};

}  // namespace train
