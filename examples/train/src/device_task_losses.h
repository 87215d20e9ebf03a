// The multi-class and regression losses on the device (DeviceLoss, device_loss.h), and the
// loss a task's settings ask for.
#pragma once

#include <acl/acl.h>
#include <aclnn/acl_meta.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "device_loss.h"
#include "task.h"

namespace train {

// A stream, device buffers and a workspace, released together.
class DeviceResources {
public:
    DeviceResources();
    ~DeviceResources();
    DeviceResources(const DeviceResources&) = delete;
    DeviceResources& operator=(const DeviceResources&) = delete;
    // Device memory for `count` elements, zeroed (so that its pages are mapped now), freed
    // with the object.
    void* buffer(int64_t count, size_t bytes_each = sizeof(float));
    // A tensor freed with the object.
    aclTensor* tensor(void* data, const std::vector<int64_t>& dims, aclDataType dtype = ACL_FLOAT);
    void keep(aclOpExecutor* executor, uint64_t workspace_bytes);
    void copy_in(void* device, const void* host, size_t bytes);
    void copy_out(void* host, const void* device, size_t bytes);
    // Runs an op's second phase on the stream.
    template <typename Launch>
    void launch(Launch op, aclOpExecutor* executor, const char* name) {
        check_acl(op(workspace_, workspace_bytes_, executor, stream_), name);
    }
    void synchronize();

private:
    aclrtStream stream_ = nullptr;
    std::vector<void*> buffers_;
    std::vector<aclTensor*> tensors_;
    std::vector<aclOpExecutor*> executors_;
    void* workspace_ = nullptr;
    uint64_t workspace_bytes_ = 0;
};

// C classes: aclnnCrossEntropyLoss (logits in, its log-probabilities kept for the gradient)
// and aclnnCrossEntropyLossGrad, or aclnnNLLLoss and aclnnNLLLossBackward on the model's
// log-probabilities; reduction none, each class weighted (the ops' weight of shape (C)).
// Targets are class indices, passed to the ops as int64; the per-sample weights are not used.
class DeviceClassLoss final : public DeviceLoss {
public:
    DeviceClassLoss(int64_t capacity, ClassLoss kind, const std::vector<float>& class_weights);
    void run_samples(const float* outputs, const float* targets, const float* weights, int64_t count,
                     float* losses, float* grad_outputs, float grad_scale) override;
    void prepare(int64_t count, bool with_backward) override;
    int64_t capacity() const override { return capacity_; }

private:
    struct Executors {
        aclOpExecutor* forward = nullptr;
        aclOpExecutor* backward = nullptr;
    };
    Executors& executors_for(int64_t count, bool with_backward);
    void make_forward(int64_t count, Executors& shape);
    void make_backward(int64_t count, Executors& shape);

    int64_t capacity_, classes_;
    ClassLoss kind_;
    DeviceResources device_;
    void *input_, *target_, *weight_, *loss_, *log_prob_, *zloss_, *lse_, *total_weight_, *grad_loss_,
        *grad_input_;
    std::vector<int64_t> host_targets_;
    std::vector<float> host_grad_loss_;  // grad_scale for each sample: the ops' gradLoss is (N)
    float grad_scale_ = 0;
    std::map<int64_t, Executors> executors_;
};

// One value a sample: aclnnMseLoss, aclnnL1Loss or aclnnSmoothL1Loss (beta) and their
// backwards, reduction none, gradOutput one element broadcast to the samples. huber(delta)
// is delta * smooth_l1 with beta = delta: the loss times delta on the host, the gradient
// through gradOutput times delta. The per-sample weights are not used.
class DeviceRegressionLoss final : public DeviceLoss {
public:
    DeviceRegressionLoss(int64_t capacity, RegressionLoss kind, float beta);
    void run_samples(const float* outputs, const float* targets, const float* weights, int64_t count,
                     float* losses, float* grad_outputs, float grad_scale) override;
    void prepare(int64_t count, bool with_backward) override;
    int64_t capacity() const override { return capacity_; }

private:
    struct Executors {
        aclOpExecutor* forward = nullptr;
        aclOpExecutor* backward = nullptr;
    };
    Executors& executors_for(int64_t count, bool with_backward);

    int64_t capacity_;
    RegressionLoss kind_;
    float beta_;
    float multiplier_;  // delta for huber, else 1
    DeviceResources device_;
    void *self_, *target_, *loss_, *grad_output_, *grad_self_;
    float grad_output_value_ = 0;
    std::map<int64_t, Executors> executors_;
};

// What a run's loss is: its task, and the settings of that task's loss.
struct LossSetup {
    Task task = Task::kBinary;
    LossKind binary_kind = LossKind::kBceWithLogits;
    std::optional<float> pos_weight;  // posWeight of the binary logits ops
    ClassLoss class_kind = ClassLoss::kCrossEntropy;
    std::vector<float> class_weights;  // multiclass: one per class
    RegressionLoss regression_kind = RegressionLoss::kMse;
    float beta = 1.0f;  // smooth_l1's beta, huber's delta
};

std::unique_ptr<DeviceLoss> make_device_loss(const LossSetup& setup, int64_t capacity);

}  // namespace train
