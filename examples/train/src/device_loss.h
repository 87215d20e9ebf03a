// The loss and its gradient on the configured backend, through the public CANN-style API:
// device buffers from aclrtMalloc, host<->device copies per batch, and repeatable executors
// kept per batch size (as CANN programs reuse them). This file: the session, the interface
// every task's loss has (DeviceLoss) and the binary cross-entropy (DeviceBceLoss); the
// multi-class and regression losses are in device_task_losses.h.
#pragma once

#include <acl/acl.h>
#include <aclnn/acl_meta.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace train {

// aclInit / aclrtSetDevice for the lifetime of the object; throws with the runtime's
// message when the config or the backend cannot be used.
class AclSession {
public:
    // wrap_device: a device beyond the backend's count wraps around (device % count).
    explicit AclSession(const char* config_path, int32_t device = 0, bool wrap_device = false);
    ~AclSession();
    AclSession(const AclSession&) = delete;
    AclSession& operator=(const AclSession&) = delete;

private:
    int32_t device_;
};

// Which ops compute the loss:
//   kBce            aclnnBinaryCrossEntropy / aclnnBinaryCrossEntropyBackward on probabilities
//   kBceWithLogits  aclnnBinaryCrossEntropyWithLogits / aclnnBinaryCrossEntropyWithLogitsBackward
//                   on logits, with an optional posWeight
// A failed call's message in one line: the runtime's recent error message (without the
// call's name it starts with) and the status by its name, e.g. "<file>:2:1: unknown key
// 'log_levl' (aclInit returned ACL_ERROR_PARSE_FILE)".
std::string acl_failure(const char* call, int status);

enum class LossKind { kBce, kBceWithLogits };

// "bce" or "bce_with_logits" (the config's `loss`); throws std::invalid_argument otherwise.
LossKind loss_kind(const std::string& name);

// A loss on the device for batches of up to capacity() samples. One object serves one
// thread at a time (its stream, buffers and executors are its own); the thread's current
// device must be the one it was made on.
class DeviceLoss {
public:
    virtual ~DeviceLoss() = default;
    // The loss of each of `count` samples (reduction none) into `losses`, for the model's
    // outputs (Model::width() floats a sample) and targets (the label, class index or value
    // of each sample); weights: each sample's, for the losses that take them (binary). With
    // grad_outputs, also the gradient of grad_scale * (sum of the losses) w.r.t. each output.
    // Each sample's results depend only on its own values and grad_scale, so a batch cut
    // into calls in any way gives the same bytes.
    virtual void run_samples(const float* outputs, const float* targets, const float* weights, int64_t count,
                             float* losses, float* grad_outputs, float grad_scale) = 0;
    // Makes the executors for calls of `count` samples now (else the first call does).
    virtual void prepare(int64_t count, bool with_backward) = 0;
    virtual int64_t capacity() const = 0;
};

// Shared by the device losses: a failed call throws with acl_failure's message; a float32
// tensor over device memory of the given shape (contiguous, ND); device memory for `count`
// elements of `bytes_each` bytes.
void check_acl(int status, const char* call);
aclTensor* device_tensor(void* data, const std::vector<int64_t>& dims, aclDataType dtype = ACL_FLOAT);
void* device_memory(int64_t count, size_t bytes_each = sizeof(float));

class DeviceBceLoss final : public DeviceLoss {
public:
    // Device buffers for batches of up to `capacity` samples. pos_weight (kBceWithLogits
    // only) becomes a one-element posWeight tensor of shape [1], broadcast to every sample.
    explicit DeviceBceLoss(int64_t capacity, LossKind kind = LossKind::kBce,
                           std::optional<float> pos_weight = std::nullopt);
    ~DeviceBceLoss() override;
    DeviceBceLoss(const DeviceBceLoss&) = delete;
    DeviceBceLoss& operator=(const DeviceBceLoss&) = delete;

    // The weighted loss of each of `count` samples (count <= capacity; reduction none)
    // into `losses`, for the model's outputs: probabilities for kBce, logits for
    // kBceWithLogits. With grad_outputs, also the gradient of grad_scale * (sum of the
    // losses) w.r.t. each output (per probability or per logit): gradOutput is grad_scale,
    // one element broadcast to the samples. Each sample's results depend only on its own
    // values and grad_scale, not on the other samples of the call, so a batch cut into
    // calls in any way gives the same bytes (grad_scale = 1 / batch rows makes the sum the
    // gradient of the batch's mean).
    void run_samples(const float* outputs, const float* targets, const float* weights, int64_t count,
                     float* losses, float* grad_outputs, float grad_scale) override;

    // Mean of the weighted loss over `count` samples; with grad_outputs, dLoss/dOutput of
    // that mean for each sample (run_samples with grad_scale 1 / count; for tests and tools).
    float run(const float* outputs, const float* targets, const float* weights, int64_t count,
              float* grad_outputs);

    // Makes the executors for calls of `count` samples now, as a loop's setup does, so that
    // its first call of that size does not (else the first call makes them).
    void prepare(int64_t count, bool with_backward) override;

    int64_t capacity() const override { return capacity_; }
    LossKind kind() const { return kind_; }

private:
    struct ShapeExecutors {
        aclTensor* self = nullptr;
        aclTensor* target = nullptr;
        aclTensor* weight = nullptr;
        aclTensor* pos_weight = nullptr;   // kBceWithLogits with a pos_weight
        aclTensor* loss = nullptr;         // [count]: reduction none
        aclTensor* grad_output = nullptr;  // [1], broadcast to the samples
        aclTensor* grad_self = nullptr;
        aclOpExecutor* forward = nullptr;
        aclOpExecutor* backward = nullptr;  // made on the first training batch of this size
        uint64_t forward_workspace = 0;
        uint64_t backward_workspace = 0;
    };

    ShapeExecutors& executors_for(int64_t count, bool with_backward);
    void reserve_workspace(uint64_t bytes);
    void release();

    int64_t capacity_;
    LossKind kind_;
    bool has_pos_weight_;
    aclrtStream stream_ = nullptr;
    void* outputs_ = nullptr;  // the model's outputs: probabilities or logits
    void* targets_ = nullptr;
    void* weights_ = nullptr;
    void* grad_self_ = nullptr;
    void* loss_ = nullptr;            // per-sample losses
    void* grad_output_ = nullptr;     // holds grad_scale
    float grad_output_value_ = 0;     // what grad_output_ holds
    std::vector<float> host_losses_;  // run()'s per-sample losses
    void* pos_weight_ = nullptr;      // one float, when has_pos_weight_
    void* workspace_ = nullptr;
    uint64_t workspace_bytes_ = 0;
    std::map<int64_t, ShapeExecutors> executors_;
};

}  // namespace train
