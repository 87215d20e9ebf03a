#include "device_task_losses.h"

#include <aclnnop/aclnn_cross_entropy_loss.h>
#include <aclnnop/aclnn_cross_entropy_loss_grad.h>
#include <aclnnop/aclnn_l1_loss.h>
#include <aclnnop/aclnn_l1_loss_backward.h>
#include <aclnnop/aclnn_mse_loss.h>
#include <aclnnop/aclnn_mse_loss_backward.h>
#include <aclnnop/aclnn_nll_loss.h>
#include <aclnnop/aclnn_nll_loss_backward.h>
#include <aclnnop/aclnn_smooth_l1_loss.h>
#include <aclnnop/aclnn_smooth_l1_loss_backward.h>
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace train {
namespace {

constexpr int64_t kReductionNone = 0;
// No target is ever this class (a negative ignoreIndex ignores nothing in CrossEntropyLoss).
constexpr int64_t kIgnoreIndex = -100;
char kNone[] = "none";  // the ops take the reduction word as char*

void check_count(int64_t count, int64_t capacity) {
    if (count < 1 || count > capacity)
        throw std::logic_error(fmt::format("a call of {} samples on a loss of capacity {}", count, capacity));
}

}  // namespace

DeviceResources::DeviceResources() {
    check_acl(aclrtCreateStream(&stream_), "aclrtCreateStream");
}

DeviceResources::~DeviceResources() {
    for (aclOpExecutor* executor : executors_) aclDestroyAclOpExecutor(executor);
    for (aclTensor* tensor : tensors_) aclDestroyTensor(tensor);
    for (void* buffer : buffers_) aclrtFree(buffer);
    if (workspace_) aclrtFree(workspace_);
    if (stream_) aclrtDestroyStream(stream_);
}

void* DeviceResources::buffer(int64_t count, size_t bytes_each) {
    void* memory = device_memory(count, bytes_each);
    buffers_.push_back(memory);
    const size_t bytes = static_cast<size_t>(count) * bytes_each;
    check_acl(aclrtMemset(memory, bytes, 0, bytes), "aclrtMemset");
    return memory;
}

aclTensor* DeviceResources::tensor(void* data, const std::vector<int64_t>& dims, aclDataType dtype) {
    tensors_.push_back(device_tensor(data, dims, dtype));
    return tensors_.back();
}

void DeviceResources::keep(aclOpExecutor* executor, uint64_t workspace_bytes) {
    executors_.push_back(executor);
    check_acl(aclSetAclOpExecutorRepeatable(executor), "aclSetAclOpExecutorRepeatable");
    if (workspace_bytes <= workspace_bytes_) return;
    if (workspace_) aclrtFree(workspace_);
    workspace_ = nullptr;
    workspace_bytes_ = 0;
    check_acl(aclrtMalloc(&workspace_, workspace_bytes, ACL_MEM_MALLOC_HUGE_FIRST),
              "aclrtMalloc (workspace)");
    workspace_bytes_ = workspace_bytes;
}

void DeviceResources::copy_in(void* device, const void* host, size_t bytes) {
    check_acl(aclrtMemcpy(device, bytes, host, bytes, ACL_MEMCPY_HOST_TO_DEVICE), "aclrtMemcpy");
}

void DeviceResources::copy_out(void* host, const void* device, size_t bytes) {
    check_acl(aclrtMemcpy(host, bytes, device, bytes, ACL_MEMCPY_DEVICE_TO_HOST), "aclrtMemcpy");
}

void DeviceResources::synchronize() {
    check_acl(aclrtSynchronizeStream(stream_), "aclrtSynchronizeStream");
}

DeviceClassLoss::DeviceClassLoss(int64_t capacity, ClassLoss kind, const std::vector<float>& class_weights)
    : capacity_(capacity), classes_(static_cast<int64_t>(class_weights.size())), kind_(kind) {
    if (classes_ < 2) throw std::logic_error("a multi-class loss of fewer than two classes");
    input_ = device_.buffer(capacity * classes_);
    target_ = device_.buffer(capacity, sizeof(int64_t));
    weight_ = device_.buffer(classes_);
    loss_ = device_.buffer(capacity);
    log_prob_ = device_.buffer(capacity * classes_);
    zloss_ = device_.buffer(1);  // CrossEntropyLoss's zloss outputs: required, never written
    lse_ = device_.buffer(1);
    total_weight_ = device_.buffer(1);
    grad_loss_ = device_.buffer(capacity);
    grad_input_ = device_.buffer(capacity * classes_);
    device_.copy_in(weight_, class_weights.data(), class_weights.size() * sizeof(float));
    host_targets_.resize(static_cast<size_t>(capacity));
    host_grad_loss_.resize(static_cast<size_t>(capacity));
}

void DeviceClassLoss::make_forward(int64_t count, Executors& shape) {
    aclTensor* input = device_.tensor(input_, {count, classes_});
    aclTensor* target = device_.tensor(target_, {count}, ACL_INT64);
    aclTensor* weight = device_.tensor(weight_, {classes_});
    aclTensor* loss = device_.tensor(loss_, {count});
    uint64_t bytes = 0;
    if (kind_ == ClassLoss::kCrossEntropy)
        check_acl(aclnnCrossEntropyLossGetWorkspaceSize(
                      input, target, weight, kNone, kIgnoreIndex, 0.0, 0.0, false, loss,
                      device_.tensor(log_prob_, {count, classes_}), device_.tensor(zloss_, {1}),
                      device_.tensor(lse_, {1}), &bytes, &shape.forward),
                  "aclnnCrossEntropyLossGetWorkspaceSize");
    else
        check_acl(aclnnNLLLossGetWorkspaceSize(input, target, weight, kReductionNone, kIgnoreIndex, loss,
                                               device_.tensor(total_weight_, {1}), &bytes, &shape.forward),
                  "aclnnNLLLossGetWorkspaceSize");
    device_.keep(shape.forward, bytes);
}

void DeviceClassLoss::make_backward(int64_t count, Executors& shape) {
    aclTensor* grad_loss = device_.tensor(grad_loss_, {count});
    aclTensor* target = device_.tensor(target_, {count}, ACL_INT64);
    aclTensor* weight = device_.tensor(weight_, {classes_});
    aclTensor* grad_input = device_.tensor(grad_input_, {count, classes_});
    uint64_t bytes = 0;
    if (kind_ == ClassLoss::kCrossEntropy)
        check_acl(aclnnCrossEntropyLossGradGetWorkspaceSize(
                      grad_loss, device_.tensor(log_prob_, {count, classes_}), target, weight, nullptr,
                      nullptr, kNone, kIgnoreIndex, 0.0, 0.0, grad_input, &bytes, &shape.backward),
                  "aclnnCrossEntropyLossGradGetWorkspaceSize");
    else
        check_acl(aclnnNLLLossBackwardGetWorkspaceSize(
                      grad_loss, device_.tensor(input_, {count, classes_}), target, weight, kReductionNone,
                      kIgnoreIndex, device_.tensor(total_weight_, {1}), grad_input, &bytes, &shape.backward),
                  "aclnnNLLLossBackwardGetWorkspaceSize");
    device_.keep(shape.backward, bytes);
}

DeviceClassLoss::Executors& DeviceClassLoss::executors_for(int64_t count, bool with_backward) {
    check_count(count, capacity_);
    Executors& shape = executors_[count];
    if (shape.forward == nullptr) make_forward(count, shape);
    if (with_backward && shape.backward == nullptr) make_backward(count, shape);
    return shape;
}

void DeviceClassLoss::prepare(int64_t count, bool with_backward) {
    executors_for(count, with_backward);
}

void DeviceClassLoss::run_samples(const float* outputs, const float* targets, const float*, int64_t count,
                                  float* losses, float* grad_outputs, float grad_scale) {
    const bool with_backward = grad_outputs != nullptr;
    Executors& shape = executors_for(count, with_backward);
    for (int64_t i = 0; i < count; ++i)
        host_targets_[static_cast<size_t>(i)] = static_cast<int64_t>(targets[i]);
    const size_t values = static_cast<size_t>(count * classes_) * sizeof(float);
    device_.copy_in(input_, outputs, values);
    device_.copy_in(target_, host_targets_.data(), static_cast<size_t>(count) * sizeof(int64_t));
    if (with_backward && grad_scale != grad_scale_) {
        // The whole buffer, so that a call of any count finds grad_scale in its first rows.
        std::fill(host_grad_loss_.begin(), host_grad_loss_.end(), grad_scale);
        device_.copy_in(grad_loss_, host_grad_loss_.data(), host_grad_loss_.size() * sizeof(float));
        grad_scale_ = grad_scale;
    }
    const bool entropy = kind_ == ClassLoss::kCrossEntropy;
    device_.launch(entropy ? aclnnCrossEntropyLoss : aclnnNLLLoss, shape.forward,
                   entropy ? "aclnnCrossEntropyLoss" : "aclnnNLLLoss");
    if (with_backward)
        device_.launch(entropy ? aclnnCrossEntropyLossGrad : aclnnNLLLossBackward, shape.backward,
                       entropy ? "aclnnCrossEntropyLossGrad" : "aclnnNLLLossBackward");
    device_.synchronize();
    device_.copy_out(losses, loss_, static_cast<size_t>(count) * sizeof(float));
    if (with_backward) device_.copy_out(grad_outputs, grad_input_, values);
}

DeviceRegressionLoss::DeviceRegressionLoss(int64_t capacity, RegressionLoss kind, float beta)
    : capacity_(capacity),
      kind_(kind),
      beta_(beta),
      multiplier_(kind == RegressionLoss::kHuber ? beta : 1.0f) {
    self_ = device_.buffer(capacity);
    target_ = device_.buffer(capacity);
    loss_ = device_.buffer(capacity);
    grad_output_ = device_.buffer(1);
    grad_self_ = device_.buffer(capacity);
}

DeviceRegressionLoss::Executors& DeviceRegressionLoss::executors_for(int64_t count, bool with_backward) {
    check_count(count, capacity_);
    Executors& shape = executors_[count];
    if (shape.forward != nullptr && (shape.backward != nullptr || !with_backward)) return shape;
    aclTensor* self = device_.tensor(self_, {count});
    aclTensor* target = device_.tensor(target_, {count});
    uint64_t bytes = 0;
    if (shape.forward == nullptr) {
        aclTensor* loss = device_.tensor(loss_, {count});
        if (kind_ == RegressionLoss::kMse)
            check_acl(
                aclnnMseLossGetWorkspaceSize(self, target, kReductionNone, loss, &bytes, &shape.forward),
                "aclnnMseLossGetWorkspaceSize");
        else if (kind_ == RegressionLoss::kL1)
            check_acl(aclnnL1LossGetWorkspaceSize(self, target, kReductionNone, loss, &bytes, &shape.forward),
                      "aclnnL1LossGetWorkspaceSize");
        else
            check_acl(aclnnSmoothL1LossGetWorkspaceSize(self, target, kReductionNone, beta_, loss, &bytes,
                                                        &shape.forward),
                      "aclnnSmoothL1LossGetWorkspaceSize");
        device_.keep(shape.forward, bytes);
    }
    if (with_backward && shape.backward == nullptr) {
        // gradOutput of shape [1] broadcasts to the samples.
        aclTensor* grad_output = device_.tensor(grad_output_, {1});
        aclTensor* grad_self = device_.tensor(grad_self_, {count});
        if (kind_ == RegressionLoss::kMse)
            check_acl(aclnnMseLossBackwardGetWorkspaceSize(grad_output, self, target, kReductionNone,
                                                           grad_self, &bytes, &shape.backward),
                      "aclnnMseLossBackwardGetWorkspaceSize");
        else if (kind_ == RegressionLoss::kL1)
            check_acl(aclnnL1LossBackwardGetWorkspaceSize(grad_output, self, target, kReductionNone,
                                                          grad_self, &bytes, &shape.backward),
                      "aclnnL1LossBackwardGetWorkspaceSize");
        else
            check_acl(aclnnSmoothL1LossBackwardGetWorkspaceSize(grad_output, self, target, kReductionNone,
                                                                beta_, grad_self, &bytes, &shape.backward),
                      "aclnnSmoothL1LossBackwardGetWorkspaceSize");
        device_.keep(shape.backward, bytes);
    }
    return shape;
}

void DeviceRegressionLoss::prepare(int64_t count, bool with_backward) {
    executors_for(count, with_backward);
}

void DeviceRegressionLoss::run_samples(const float* outputs, const float* targets, const float*,
                                       int64_t count, float* losses, float* grad_outputs, float grad_scale) {
    const bool with_backward = grad_outputs != nullptr;
    Executors& shape = executors_for(count, with_backward);
    const size_t bytes = static_cast<size_t>(count) * sizeof(float);
    device_.copy_in(self_, outputs, bytes);
    device_.copy_in(target_, targets, bytes);
    const float grad_output = grad_scale * multiplier_;
    if (with_backward && grad_output != grad_output_value_) {
        device_.copy_in(grad_output_, &grad_output, sizeof(float));
        grad_output_value_ = grad_output;
    }
    const auto forward = kind_ == RegressionLoss::kMse  ? aclnnMseLoss
                         : kind_ == RegressionLoss::kL1 ? aclnnL1Loss
                                                        : aclnnSmoothL1Loss;
    const auto backward = kind_ == RegressionLoss::kMse  ? aclnnMseLossBackward
                          : kind_ == RegressionLoss::kL1 ? aclnnL1LossBackward
                                                         : aclnnSmoothL1LossBackward;
    static const char* const kNames[][2] = {{"aclnnMseLoss", "aclnnMseLossBackward"},
                                            {"aclnnL1Loss", "aclnnL1LossBackward"},
                                            {"aclnnSmoothL1Loss", "aclnnSmoothL1LossBackward"}};
    const auto* names = kNames[std::min(static_cast<int>(kind_), 2)];  // huber runs smooth_l1
    device_.launch(forward, shape.forward, names[0]);
    if (with_backward) device_.launch(backward, shape.backward, names[1]);
    device_.synchronize();
    device_.copy_out(losses, loss_, bytes);
    if (multiplier_ != 1.0f)
        for (int64_t i = 0; i < count; ++i) losses[i] *= multiplier_;
    if (with_backward) device_.copy_out(grad_outputs, grad_self_, bytes);
}

std::unique_ptr<DeviceLoss> make_device_loss(const LossSetup& setup, int64_t capacity) {
    if (setup.task == Task::kMulticlass)
        return std::make_unique<DeviceClassLoss>(capacity, setup.class_kind, setup.class_weights);
    if (setup.task == Task::kRegression)
        return std::make_unique<DeviceRegressionLoss>(capacity, setup.regression_kind, setup.beta);
    return std::make_unique<DeviceBceLoss>(capacity, setup.binary_kind, setup.pos_weight);
}

}  // namespace train
