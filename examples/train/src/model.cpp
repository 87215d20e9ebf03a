#include "model.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

#include "row_kernels.h"
#include "sigmoid.h"

namespace train {
namespace {

// Rows per matrix product inside a shard: keeps Eigen's packing buffers on the stack (no
// allocation) and the block in cache. Fixed, so a shard's arithmetic never depends on
// anything but its rows.
constexpr int64_t kBlockRows = 256;

// Whether rows are read in place as one matrix (else an MLP gathers them first).
inline bool contiguous(const BatchRows& rows, int64_t columns) {
    return !rows.index && (rows.stride == 0 || rows.stride == columns);
}

}  // namespace

Model::Model(int64_t inputs, const std::vector<int64_t>& hidden, ModelOutput output, int64_t outputs)
    : output_(output) {
    if ((outputs != 1) !=
        (output == ModelOutput::kLogSoftmax || (output == ModelOutput::kLogit && outputs > 1)))
        throw std::logic_error(
            fmt::format("a model output of kind {} with {} units", static_cast<int>(output), outputs));
    sizes_.push_back(inputs);
    sizes_.insert(sizes_.end(), hidden.begin(), hidden.end());
    sizes_.push_back(outputs);
    size_t offset = 0;
    bool wrapped = false;
    for (size_t l = 0; l + 1 < sizes_.size(); ++l) {
        size_t weights = 0;
        wrapped = wrapped || sizes_[l] < 1 || sizes_[l + 1] < 1 ||
                  __builtin_mul_overflow(static_cast<size_t>(sizes_[l]), static_cast<size_t>(sizes_[l + 1]),
                                         &weights) ||
                  __builtin_add_overflow(offset, weights + static_cast<size_t>(sizes_[l + 1]), &weights);
        const Layer layer{sizes_[l], sizes_[l + 1], offset, weights - static_cast<size_t>(sizes_[l + 1])};
        offset = weights;
        layers_.push_back(layer);
    }
    allocate_parameters(offset, wrapped);
    for (const Layer& layer : layers_)
        std::fill(decayed_.begin() + static_cast<std::ptrdiff_t>(layer.weight_offset),
                  decayed_.begin() + static_cast<std::ptrdiff_t>(layer.bias_offset), 1);
    activations_.resize(layers_.size());
    deltas_.resize(layers_.size());
}

void Model::allocate_parameters(size_t count, bool wrapped) {
    // Each parameter takes 4 bytes, its gradient 4 and its decay flag 1.
    constexpr size_t kBytesEach = 2 * sizeof(float) + sizeof(uint8_t);
    const std::string layers = fmt::format("{}", fmt::join(sizes_, "-"));
    if (wrapped || count > SIZE_MAX / kBytesEach)
        throw std::runtime_error(
            fmt::format("the model {} has more parameters than any memory holds", layers));
    try {
        parameters_.assign(count, 0.0f);
        gradients_.assign(count, 0.0f);
        decayed_.assign(count, 0);
    } catch (const std::bad_alloc&) {
        throw std::runtime_error(fmt::format(
            "cannot allocate the model {}: {} parameters take {} bytes with their gradients (out of "
            "memory)",
            layers, count, count * kBytesEach));
    }
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

void Model::reserve(int64_t rows) {
    if (rows <= capacity_) return;
    capacity_ = rows;
    // Zeroed here, so that their pages are mapped now and not at a step's first write (a
    // page fault costs microseconds, more in a virtual machine).
    gathered_.setZero(rows, sizes_[0]);
    if (!single_dot()) {
        for (size_t l = 0; l < layers_.size(); ++l) {
            activations_[l].setZero(rows, layers_[l].outputs);
            deltas_[l].setZero(rows, layers_[l].outputs);
        }
    }
    output_values_.assign(static_cast<size_t>(rows * width()), 0.0f);
    probabilities_.assign(static_cast<size_t>(rows), 0.0f);
    predicted_.assign(width() > 1 ? static_cast<size_t>(rows) : 0, 0);
}

void Model::finish_rows(const float* logits, int64_t begin, int64_t end) {
    if (width() > 1) return finish_class_rows(logits, begin, end);
    if (output_ == ModelOutput::kValue) {
        if (logits != output_values_.data())  // linear regression wrote its values there already
            std::copy(logits + begin, logits + end, output_values_.data() + begin);
        return;
    }
    sigmoid(logits + begin, probabilities_.data() + begin, end - begin);
    if (output_ == ModelOutput::kProbability)
        std::copy(probabilities_.data() + begin, probabilities_.data() + end, output_values_.data() + begin);
    else if (logits != output_values_.data())  // logistic regression wrote the logits there already
        std::copy(logits + begin, logits + end, output_values_.data() + begin);
}

// Each row's class of the largest logit (the first on a tie); for kLogSoftmax, the row's
// log-softmax z - max - log(sum exp(z - max)), in float, row by row.
void Model::finish_class_rows(const float* logits, int64_t begin, int64_t end) {
    const int64_t classes = width();
    for (int64_t k = begin; k < end; ++k) {
        const float* z = logits + k * classes;
        int64_t best = 0;
        for (int64_t c = 1; c < classes; ++c)
            if (z[c] > z[best]) best = c;
        predicted_[static_cast<size_t>(k)] = static_cast<int32_t>(best);
        float* out = output_values_.data() + k * classes;
        if (output_ == ModelOutput::kLogit) {
            std::copy(z, z + classes, out);
            continue;
        }
        float sum = 0.0f;
        for (int64_t c = 0; c < classes; ++c) sum += std::exp(z[c] - z[best]);
        const float log_sum = z[best] + std::log(sum);
        for (int64_t c = 0; c < classes; ++c) out[c] = z[c] - log_sum;
    }
}

void Model::output_deltas(const float* grad_outputs, int64_t begin, int64_t end, float* deltas) const {
    const int64_t columns = width();
    if (output_ == ModelOutput::kLogit || output_ == ModelOutput::kValue) {
        std::copy(grad_outputs + begin * columns, grad_outputs + end * columns, deltas);
        return;
    }
    if (output_ == ModelOutput::kLogSoftmax) {
        // Through the log-softmax: dL/dz_c = g_c - softmax_c * sum_k g_k.
        for (int64_t k = begin; k < end; ++k) {
            const float* g = grad_outputs + k * columns;
            const float* log_p = output_values_.data() + k * columns;
            float total = 0.0f;
            for (int64_t c = 0; c < columns; ++c) total += g[c];
            float* delta = deltas + (k - begin) * columns;
            for (int64_t c = 0; c < columns; ++c) delta[c] = g[c] - std::exp(log_p[c]) * total;
        }
        return;
    }
    // Through the sigmoid: dL/dz = dL/dp * p * (1 - p).
    const float* p = probabilities_.data();
    for (int64_t k = begin; k < end; ++k) deltas[k - begin] = grad_outputs[k] * (p[k] * (1.0f - p[k]));
}

void Model::forward_shard(const BatchRows& rows, int64_t begin, int64_t end) {
    const int64_t inputs = sizes_[0];
    if (single_dot()) {
        // Logistic (or linear) regression: one dot product per row, read where the row is.
        const float* weight = parameters_.data() + layers_[0].weight_offset;
        const float bias = parameters_[layers_[0].bias_offset];
        float* logits = output_values_.data();  // the logit first, replaced by finish_rows
        // With an index, each row is gathered while it is read, so that backward reads the
        // batch in order.
        row_logits(rows, begin, end, inputs, weight, bias, logits, rows.index ? gathered_.data() : nullptr);
        finish_rows(logits, begin, end);
        return;
    }
    for (int64_t block = begin; block < end; block += kBlockRows) {
        const int64_t stop = std::min(end, block + kBlockRows);
        const int64_t count = stop - block;
        const float* input = rows.data + block * inputs;
        if (!contiguous(rows, inputs)) {
            for (int64_t k = block; k < stop; ++k) {
                prefetch_row(rows, k + kPrefetchRows, stop, inputs);
                std::memcpy(gathered_.data() + k * inputs, rows.row(k, inputs),
                            static_cast<size_t>(inputs) * sizeof(float));
            }
            input = gathered_.data() + block * inputs;
        }
        for (size_t l = 0; l < layers_.size(); ++l) {
            const Layer& layer = layers_[l];
            ConstMap in(input, count, layer.inputs);
            ConstMap weight(parameters_.data() + layer.weight_offset, layer.outputs, layer.inputs);
            Eigen::Map<const Eigen::RowVectorXf> bias(parameters_.data() + layer.bias_offset, layer.outputs);
            Map out(activations_[l].data() + block * layer.outputs, count, layer.outputs);
            out.noalias() = in * weight.transpose();
            out.rowwise() += bias;
            if (l + 1 < layers_.size()) out = out.cwiseMax(0.0f);
            input = out.data();
        }
        finish_rows(activations_.back().data(), block, stop);
    }
}

void Model::backward_shard(const BatchRows& rows, const float* grad_outputs, int64_t begin, int64_t end,
                           float* gradient) {
    const int64_t inputs = sizes_[0];
    if (single_dot()) {
        // weight_grad[j] = sum over rows k, in order, of delta_k * x_kj (row_kernels.h), a
        // chunk of rows at a time. The bias's gradient, the sum of the deltas, is taken in
        // four running sums (of the rows begin + 4i + l), then (0 + 1) + (2 + 3): a fixed
        // order whose adds overlap.
        float* weight_grad = gradient + layers_[0].weight_offset;
        std::fill(weight_grad, weight_grad + inputs, 0.0f);
        float bias_sums[4] = {};
        const float* gathered = gathered_.data();
        constexpr int64_t kChunkRows = 64;
        float delta[kChunkRows];
        const float* x[kChunkRows];
        for (int64_t chunk = begin; chunk < end; chunk += kChunkRows) {
            const int64_t count = std::min(kChunkRows, end - chunk);
            output_deltas(grad_outputs, chunk, chunk + count, delta);
            for (int64_t i = 0; i < count; ++i)
                x[i] = rows.index ? gathered + (chunk + i) * inputs : rows.row(chunk + i, inputs);
            // Four rows a turn with constant indices, so that the sums stay in registers.
            int64_t i = 0;
            for (; i + 4 <= count; i += 4)
                for (int l = 0; l < 4; ++l) bias_sums[l] += delta[i + l];
            for (int l = 0; i < count; ++i, ++l) bias_sums[l] += delta[i];
            add_row_products(weight_grad, delta, x, count, inputs);
        }
        gradient[layers_[0].bias_offset] = (bias_sums[0] + bias_sums[1]) + (bias_sums[2] + bias_sums[3]);
        return;
    }
    RowMatrix& top = deltas_.back();
    output_deltas(grad_outputs, begin, end, top.data() + begin * width());
    for (size_t l = layers_.size(); l-- > 0;) {
        const Layer& layer = layers_[l];
        Map weight_grad(gradient + layer.weight_offset, layer.outputs, layer.inputs);
        Eigen::Map<Eigen::RowVectorXf> bias_grad(gradient + layer.bias_offset, layer.outputs);
        ConstMap weight(parameters_.data() + layer.weight_offset, layer.outputs, layer.inputs);
        for (int64_t block = begin; block < end; block += kBlockRows) {
            const int64_t count = std::min(end, block + kBlockRows) - block;
            ConstMap delta(deltas_[l].data() + block * layer.outputs, count, layer.outputs);
            const float* input = l > 0 ? activations_[l - 1].data() + block * layer.inputs
                                 : !contiguous(rows, inputs) ? gathered_.data() + block * inputs
                                                             : rows.data + block * inputs;
            ConstMap in(input, count, layer.inputs);
            if (block == begin) {
                weight_grad.noalias() = delta.transpose() * in;
                bias_grad = delta.colwise().sum();
            } else {
                weight_grad.noalias() += delta.transpose() * in;
                bias_grad += delta.colwise().sum();
            }
            if (l == 0) continue;
            Map below(deltas_[l - 1].data() + block * layer.inputs, count, layer.inputs);
            below.noalias() = delta * weight;
            // ReLU passes the gradient where its output was positive.
            // (A plain loop: the compiler makes it a vector mask, where Eigen's select
            // stays a branch per element.)
            const float* above = activations_[l - 1].data() + block * layer.inputs;
            float* gradient_below = below.data();
            for (int64_t i = 0; i < count * layer.inputs; ++i)
                gradient_below[i] = above[i] > 0.0f ? gradient_below[i] : 0.0f;
        }
    }
}

const Eigen::VectorXf& Model::forward(const float* batch, int64_t rows) {
    reserve(rows);
    last_rows_ = BatchRows{batch, nullptr};
    last_count_ = rows;
    forward_shard(last_rows_, 0, rows);
    batch_outputs_ = Eigen::Map<const Eigen::VectorXf>(output_values_.data(), rows * width());
    batch_probabilities_ = Eigen::Map<const Eigen::VectorXf>(probabilities_.data(), rows);
    return batch_outputs_;
}

void Model::backward(const float* grad_outputs) {
    backward_shard(last_rows_, grad_outputs, 0, last_count_, gradients_.data());
}

void Model::add_weight_decay(float decay) {
    if (decay == 0.0f) return;
    for (size_t i = 0; i < parameters_.size(); ++i)
        if (decayed_[i]) gradients_[i] += decay * parameters_[i];
}

}  // namespace train
