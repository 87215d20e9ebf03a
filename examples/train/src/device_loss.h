// The binary cross-entropy loss and its gradient on the configured backend, through
// the public CANN-style API: device buffers from aclrtMalloc, host<->device copies per
// batch, and repeatable executors kept per batch size (as CANN programs reuse them).
#pragma once

#include <acl/acl.h>
#include <aclnn/acl_meta.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace train {

// aclInit / aclrtSetDevice for the lifetime of the object; throws with the runtime's
// message when the config or the backend cannot be used.
class AclSession {
public:
    explicit AclSession(const char* config_path, int32_t device = 0);
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
enum class LossKind { kBce, kBceWithLogits };

// "bce" or "bce_with_logits" (the config's `loss`); throws std::invalid_argument otherwise.
LossKind loss_kind(const std::string& name);

class DeviceBceLoss {
public:
    // Device buffers for batches of up to `capacity` samples. pos_weight (kBceWithLogits
    // only) becomes a one-element posWeight tensor of shape [1], broadcast to every sample.
    explicit DeviceBceLoss(int64_t capacity, LossKind kind = LossKind::kBce,
                           std::optional<float> pos_weight = std::nullopt);
    ~DeviceBceLoss();
    DeviceBceLoss(const DeviceBceLoss&) = delete;
    DeviceBceLoss& operator=(const DeviceBceLoss&) = delete;

    // Mean of the weighted loss over `count` samples (count <= capacity) of the model's
    // outputs: probabilities for kBce, logits for kBceWithLogits. With grad_outputs, also
    // writes dLoss/dOutput (per probability or per logit) for each sample there.
    float run(const float* outputs, const float* targets, const float* weights, int64_t count, float* grad_outputs);

    int64_t capacity() const { return capacity_; }
    LossKind kind() const { return kind_; }

private:
    struct ShapeExecutors {
        aclTensor* self = nullptr;
        aclTensor* target = nullptr;
        aclTensor* weight = nullptr;
        aclTensor* pos_weight = nullptr;  // kBceWithLogits with a pos_weight
        aclTensor* loss = nullptr;
        aclTensor* grad_output = nullptr;
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
    void* loss_ = nullptr;
    void* grad_output_ = nullptr;  // holds 1.0: d(mean loss)/d(mean loss)
    void* pos_weight_ = nullptr;   // one float, when has_pos_weight_
    void* workspace_ = nullptr;
    uint64_t workspace_bytes_ = 0;
    std::map<int64_t, ShapeExecutors> executors_;
};

}  // namespace train
