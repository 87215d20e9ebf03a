#include "optimizer.h"

#include <cmath>

namespace train {

Optimizer::Optimizer(const TrainSettings& settings, size_t parameter_count)
    : kind_(settings.optimizer),
      learning_rate_(static_cast<float>(settings.learning_rate)),
      momentum_(static_cast<float>(settings.momentum)),
      beta1_(static_cast<float>(settings.beta1)),
      beta2_(static_cast<float>(settings.beta2)),
      epsilon_(static_cast<float>(settings.epsilon)),
      first_(parameter_count, 0.0f),
      second_(kind_ == "adam" ? parameter_count : 0, 0.0f) {}

void Optimizer::step(std::vector<float>& parameters, const std::vector<float>& gradients) {
    begin_step();
    update(parameters.data(), gradients.data(), 0, parameters.size());
}

void Optimizer::begin_step() {
    ++steps_;
    if (kind_ == "sgd") return;
    const double t = static_cast<double>(steps_);
    const float bias_correction1 = static_cast<float>(1.0 - std::pow(static_cast<double>(beta1_), t));
    sqrt_bias_correction2_ = static_cast<float>(std::sqrt(1.0 - std::pow(static_cast<double>(beta2_), t)));
    step_size_ = learning_rate_ / bias_correction1;
}

void Optimizer::update(float* parameters, const float* gradients, size_t begin, size_t end) {
    if (kind_ == "sgd") {
        // v = momentum * v + g; p -= lr * v (the first step starts from v = g, as PyTorch does).
        for (size_t i = begin; i < end; ++i) {
            first_[i] = steps_ == 1 ? gradients[i] : momentum_ * first_[i] + gradients[i];
            parameters[i] -= learning_rate_ * first_[i];
        }
        return;
    }
    for (size_t i = begin; i < end; ++i) {
        const float g = gradients[i];
        first_[i] = beta1_ * first_[i] + (1.0f - beta1_) * g;
        second_[i] = beta2_ * second_[i] + (1.0f - beta2_) * (g * g);
        const float denominator = std::sqrt(second_[i]) / sqrt_bias_correction2_ + epsilon_;
        parameters[i] -= step_size_ * (first_[i] / denominator);
    }
}

bool Optimizer::restore(const std::string& kind, int64_t steps, std::vector<float> first,
                        std::vector<float> second) {
    if (kind != kind_ || steps < 0 || first.size() != first_.size() || second.size() != second_.size())
        return false;
    steps_ = steps;
    first_ = std::move(first);
    second_ = std::move(second);
    return true;
}

}  // namespace train
