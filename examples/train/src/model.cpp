#include "model.h"

#include <cmath>

namespace train {

Model::Model(int64_t inputs, const std::vector<int64_t>& hidden, ModelOutput output) : output_(output) {
    sizes_.push_back(inputs);
    sizes_.insert(sizes_.end(), hidden.begin(), hidden.end());
    sizes_.push_back(1);
    size_t offset = 0;
    for (size_t l = 0; l + 1 < sizes_.size(); ++l) {
        const Layer layer{sizes_[l], sizes_[l + 1], offset, offset + static_cast<size_t>(sizes_[l] * sizes_[l + 1])};
        offset = layer.bias_offset + static_cast<size_t>(layer.outputs);
        layers_.push_back(layer);
    }
    parameters_.assign(offset, 0.0f);
    gradients_.assign(offset, 0.0f);
    outputs_.resize(layers_.size());
    deltas_.resize(layers_.size());
}

void Model::initialize(RandomStream& random) {
    for (size_t l = 0; l < layers_.size(); ++l) {
        const Layer& layer = layers_[l];
        const bool output_layer = l + 1 == layers_.size();
        const float limit = output_layer ? std::sqrt(6.0f / static_cast<float>(layer.inputs + layer.outputs))
                                         : std::sqrt(6.0f / static_cast<float>(layer.inputs));
        for (int64_t i = 0; i < layer.inputs * layer.outputs; ++i)
            parameters_[layer.weight_offset + i] = (2.0f * random.uniform() - 1.0f) * limit;
        for (int64_t i = 0; i < layer.outputs; ++i) parameters_[layer.bias_offset + i] = 0.0f;
    }
}

const Eigen::VectorXf& Model::forward(const float* batch, int64_t rows) {
    input_ = batch;
    rows_ = rows;
    const float* input = input_;
    for (size_t l = 0; l < layers_.size(); ++l) {
        const Layer& layer = layers_[l];
        ConstMap in(input, rows, layer.inputs);
        ConstMap weight(parameters_.data() + layer.weight_offset, layer.outputs, layer.inputs);
        Eigen::Map<const Eigen::RowVectorXf> bias(parameters_.data() + layer.bias_offset, layer.outputs);
        RowMatrix& out = outputs_[l];
        out.resize(rows, layer.outputs);
        out.noalias() = in * weight.transpose();
        out.rowwise() += bias;
        if (l + 1 < layers_.size()) out = out.cwiseMax(0.0f);
        input = out.data();
    }
    probabilities_.resize(rows);
    const RowMatrix& logits = outputs_.back();
    for (int64_t i = 0; i < rows; ++i) probabilities_[i] = 1.0f / (1.0f + std::exp(-logits(i, 0)));
    if (output_ == ModelOutput::kProbability) return probabilities_;
    logits_ = Eigen::Map<const Eigen::VectorXf>(logits.data(), rows);
    return logits_;
}

void Model::backward(const float* grad_outputs) {
    RowMatrix& top = deltas_.back();
    top.resize(rows_, 1);
    if (output_ == ModelOutput::kLogit) {
        for (int64_t i = 0; i < rows_; ++i) top(i, 0) = grad_outputs[i];
    } else {
        // Through the sigmoid: dL/dz = dL/dp * p * (1 - p).
        for (int64_t i = 0; i < rows_; ++i) {
            const float p = probabilities_[i];
            top(i, 0) = grad_outputs[i] * (p * (1.0f - p));
        }
    }
    for (size_t l = layers_.size(); l-- > 0;) {
        const Layer& layer = layers_[l];
        const RowMatrix& delta = deltas_[l];
        ConstMap in(l == 0 ? input_ : outputs_[l - 1].data(), rows_, layer.inputs);
        Map weight_grad(gradients_.data() + layer.weight_offset, layer.outputs, layer.inputs);
        Eigen::Map<Eigen::RowVectorXf> bias_grad(gradients_.data() + layer.bias_offset, layer.outputs);
        weight_grad.noalias() = delta.transpose() * in;
        bias_grad = delta.colwise().sum();
        if (l == 0) break;
        ConstMap weight(parameters_.data() + layer.weight_offset, layer.outputs, layer.inputs);
        RowMatrix& below = deltas_[l - 1];
        below.resize(rows_, layer.inputs);
        below.noalias() = delta * weight;
        // ReLU passes the gradient where its output was positive.
        below = (outputs_[l - 1].array() > 0.0f).select(below, 0.0f);
    }
}

void Model::add_weight_decay(float decay) {
    if (decay == 0.0f) return;
    for (const Layer& layer : layers_)
        for (int64_t i = 0; i < layer.inputs * layer.outputs; ++i)
            gradients_[layer.weight_offset + i] += decay * parameters_[layer.weight_offset + i];
}

}  // namespace train
