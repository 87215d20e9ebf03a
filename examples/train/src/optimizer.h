// SGD with momentum and Adam over a flat parameter array, with PyTorch's update rules
// (torch.optim.SGD with dampening 0, torch.optim.Adam) so that runs compare one to one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "train_settings.h"

namespace train {

class Optimizer {
public:
    Optimizer(const TrainSettings& settings, size_t parameter_count);

    void step(std::vector<float>& parameters, const std::vector<float>& gradients);
    // step() in parts: begin_step once, then update over ranges that cover the parameters
    // (from any threads at once; each parameter's update is independent of the others).
    void begin_step();
    void update(float* parameters, const float* gradients, size_t begin, size_t end);

    // The state a checkpoint saves: the kind, the step count and the moment buffers.
    const std::string& kind() const { return kind_; }
    int64_t steps() const { return steps_; }
    const std::vector<float>& first_moment() const { return first_; }
    const std::vector<float>& second_moment() const { return second_; }
    // False when the saved state does not fit this optimizer.
    bool restore(const std::string& kind, int64_t steps, std::vector<float> first, std::vector<float> second);

private:
    std::string kind_;
    float learning_rate_;
    float momentum_;
    float beta1_, beta2_, epsilon_;
    int64_t steps_ = 0;
    float step_size_ = 0, sqrt_bias_correction2_ = 1;  // Adam, for the current step
    std::vector<float> first_;                         // SGD: velocity; Adam: mean of gradients
    std::vector<float> second_;                        // Adam: mean of squared gradients; empty for SGD
};

}  // namespace train
