#include "device_loss.h"

#include <aclnnop/aclnn_binary_cross_entropy.h>
#include <aclnnop/aclnn_binary_cross_entropy_backward.h>
#include <aclnnop/aclnn_binary_cross_entropy_with_logits.h>
#include <aclnnop/aclnn_binary_cross_entropy_with_logits_backward.h>
#include <fmt/format.h>

#include <stdexcept>

namespace train {
namespace {

constexpr int64_t kReductionNone = 0;

void check(int status, const char* call) {
    check_acl(status, call);
}

aclTensor* vector_tensor(void* data, int64_t length) {
    return device_tensor(data, {length});
}

void* device_buffer(int64_t floats) {
    return device_memory(floats);
}

}  // namespace

void check_acl(int status, const char* call) {
    if (status != 0) throw std::runtime_error(acl_failure(call, status));
}

aclTensor* device_tensor(void* data, const std::vector<int64_t>& dims, aclDataType dtype) {
    std::vector<int64_t> strides(dims.size(), 1);
    for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
    const auto rank = static_cast<uint64_t>(dims.size());
    aclTensor* tensor =
        aclCreateTensor(dims.data(), rank, dtype, strides.data(), 0, ACL_FORMAT_ND, dims.data(), rank, data);
    if (tensor == nullptr)
        throw std::runtime_error(fmt::format("aclCreateTensor failed: {}", aclGetRecentErrMsg()));
    return tensor;
}

void* device_memory(int64_t count, size_t bytes_each) {
    void* pointer = nullptr;
    check_acl(aclrtMalloc(&pointer, static_cast<size_t>(count) * bytes_each, ACL_MEM_MALLOC_HUGE_FIRST),
              "aclrtMalloc");
    return pointer;
}

LossKind loss_kind(const std::string& name) {
    if (name == "bce") return LossKind::kBce;
    if (name == "bce_with_logits") return LossKind::kBceWithLogits;
    throw std::invalid_argument(fmt::format("loss '{}' is not bce or bce_with_logits", name));
}

static const char* acl_status_name(int status) {
    static const std::pair<int, const char*> kNames[] = {
        {ACL_ERROR_INVALID_PARAM, "ACL_ERROR_INVALID_PARAM"},
        {ACL_ERROR_UNINITIALIZE, "ACL_ERROR_UNINITIALIZE"},
        {ACL_ERROR_REPEAT_INITIALIZE, "ACL_ERROR_REPEAT_INITIALIZE"},
        {ACL_ERROR_INVALID_FILE, "ACL_ERROR_INVALID_FILE"},
        {ACL_ERROR_PARSE_FILE, "ACL_ERROR_PARSE_FILE"},
        {ACL_ERROR_REPEAT_FINALIZE, "ACL_ERROR_REPEAT_FINALIZE"},
        {ACL_ERROR_RT_PARAM_INVALID, "ACL_ERROR_RT_PARAM_INVALID"},
        {ACL_ERROR_RT_INVALID_DEVICEID, "ACL_ERROR_RT_INVALID_DEVICEID"},
        {ACL_ERROR_BAD_ALLOC, "ACL_ERROR_BAD_ALLOC"},
        {ACL_ERROR_INVALID_DEVICE, "ACL_ERROR_INVALID_DEVICE"},
        {ACL_ERROR_INVALID_RESOURCE_HANDLE, "ACL_ERROR_INVALID_RESOURCE_HANDLE"},
        {ACL_ERROR_RT_MEMORY_ALLOCATION, "ACL_ERROR_RT_MEMORY_ALLOCATION"},
        {ACL_ERROR_INTERNAL_ERROR, "ACL_ERROR_INTERNAL_ERROR"},
        {ACL_ERROR_FAILURE, "ACL_ERROR_FAILURE"},
        {ACL_ERROR_RT_FAILURE, "ACL_ERROR_RT_FAILURE"},
    };
    for (const auto& [code, name] : kNames)
        if (code == status) return name;
    return nullptr;
}

std::string acl_failure(const char* call, int status) {
    std::string message = aclGetRecentErrMsg();
    // The runtime's message starts with the call's name already.
    const std::string prefix = std::string(call) + ": ";
    if (message.rfind(prefix, 0) == 0) message.erase(0, prefix.size());
    if (message.empty()) message = "failed";
    const char* name = acl_status_name(status);
    return fmt::format("{} ({} returned {})", message, call, name ? name : fmt::format("status {}", status));
}

AclSession::AclSession(const char* config_path, int32_t device, bool wrap_device) : device_(device) {
    check(aclInit(config_path), "aclInit");
    uint32_t count = 0;
    if (wrap_device && aclrtGetDeviceCount(&count) == ACL_SUCCESS && count > 0)
        device_ = static_cast<int32_t>(static_cast<uint32_t>(device_) % count);
    if (const aclError status = aclrtSetDevice(device_)) {
        const std::string message = acl_failure("aclrtSetDevice", status);
        aclFinalize();
        throw std::runtime_error(message);
    }
}

AclSession::~AclSession() {
    aclrtResetDevice(device_);
    aclFinalize();
}

DeviceBceLoss::DeviceBceLoss(int64_t capacity, LossKind kind, std::optional<float> pos_weight)
    : capacity_(capacity), kind_(kind), has_pos_weight_(pos_weight.has_value()) {
    if (has_pos_weight_ && kind_ != LossKind::kBceWithLogits)
        throw std::logic_error("aclnnBinaryCrossEntropy takes no posWeight: fold it into the sample weights");
    try {
        check(aclrtCreateStream(&stream_), "aclrtCreateStream");
        outputs_ = device_buffer(capacity);
        targets_ = device_buffer(capacity);
        weights_ = device_buffer(capacity);
        grad_self_ = device_buffer(capacity);
        loss_ = device_buffer(capacity);
        grad_output_ = device_buffer(1);
        // Zeroed now, so that a backend holding device memory in host pages maps them here
        // and not at the first call.
        for (void* buffer : {outputs_, targets_, weights_, grad_self_, loss_}) {
            const size_t bytes = static_cast<size_t>(capacity) * sizeof(float);
            check(aclrtMemset(buffer, bytes, 0, bytes), "aclrtMemset");
        }
        const float zero = 0.0f;
        check(aclrtMemcpy(grad_output_, sizeof(float), &zero, sizeof(float), ACL_MEMCPY_HOST_TO_DEVICE),
              "aclrtMemcpy");
        if (has_pos_weight_) {
            pos_weight_ = device_buffer(1);
            check(aclrtMemcpy(pos_weight_, sizeof(float), &*pos_weight, sizeof(float),
                              ACL_MEMCPY_HOST_TO_DEVICE),
                  "aclrtMemcpy");
        }
    } catch (...) {
        release();
        throw;
    }
}

DeviceBceLoss::~DeviceBceLoss() {
    release();
}

void DeviceBceLoss::release() {
    for (auto& [count, shape] : executors_) {
        if (shape.forward) aclDestroyAclOpExecutor(shape.forward);
        if (shape.backward) aclDestroyAclOpExecutor(shape.backward);
        for (aclTensor* tensor : {shape.self, shape.target, shape.weight, shape.pos_weight, shape.loss,
                                  shape.grad_output, shape.grad_self})
            if (tensor) aclDestroyTensor(tensor);
    }
    executors_.clear();
    for (void** buffer :
         {&outputs_, &targets_, &weights_, &grad_self_, &loss_, &grad_output_, &pos_weight_, &workspace_}) {
        if (*buffer) aclrtFree(*buffer);
        *buffer = nullptr;
    }
    if (stream_) aclrtDestroyStream(stream_);
    stream_ = nullptr;
}

void DeviceBceLoss::reserve_workspace(uint64_t bytes) {
    if (bytes <= workspace_bytes_) return;
    if (workspace_) aclrtFree(workspace_);
    workspace_ = nullptr;
    workspace_bytes_ = 0;
    check(aclrtMalloc(&workspace_, bytes, ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc (workspace)");
    workspace_bytes_ = bytes;
}

DeviceBceLoss::ShapeExecutors& DeviceBceLoss::executors_for(int64_t count, bool with_backward) {
    ShapeExecutors& shape = executors_[count];
    if (shape.forward == nullptr) {
        shape.self = vector_tensor(outputs_, count);
        shape.target = vector_tensor(targets_, count);
        shape.weight = vector_tensor(weights_, count);
        // posWeight of shape [1]: it broadcasts to self's [count].
        if (has_pos_weight_) shape.pos_weight = vector_tensor(pos_weight_, 1);
        shape.loss = vector_tensor(loss_, count);
        if (kind_ == LossKind::kBceWithLogits)
            check(aclnnBinaryCrossEntropyWithLogitsGetWorkspaceSize(
                      shape.self, shape.target, shape.weight, shape.pos_weight, kReductionNone, shape.loss,
                      &shape.forward_workspace, &shape.forward),
                  "aclnnBinaryCrossEntropyWithLogitsGetWorkspaceSize");
        else
            check(aclnnBinaryCrossEntropyGetWorkspaceSize(shape.self, shape.target, shape.weight,
                                                          kReductionNone, shape.loss,
                                                          &shape.forward_workspace, &shape.forward),
                  "aclnnBinaryCrossEntropyGetWorkspaceSize");
        check(aclSetAclOpExecutorRepeatable(shape.forward), "aclSetAclOpExecutorRepeatable");
        reserve_workspace(shape.forward_workspace);
    }
    if (with_backward && shape.backward == nullptr) {
        shape.grad_output = vector_tensor(grad_output_, 1);
        shape.grad_self = vector_tensor(grad_self_, count);
        if (kind_ == LossKind::kBceWithLogits)
            check(aclnnBinaryCrossEntropyWithLogitsBackwardGetWorkspaceSize(
                      shape.grad_output, shape.self, shape.target, shape.weight, shape.pos_weight,
                      kReductionNone, shape.grad_self, &shape.backward_workspace, &shape.backward),
                  "aclnnBinaryCrossEntropyWithLogitsBackwardGetWorkspaceSize");
        else
            check(aclnnBinaryCrossEntropyBackwardGetWorkspaceSize(
                      shape.grad_output, shape.self, shape.target, shape.weight, kReductionNone,
                      shape.grad_self, &shape.backward_workspace, &shape.backward),
                  "aclnnBinaryCrossEntropyBackwardGetWorkspaceSize");
        check(aclSetAclOpExecutorRepeatable(shape.backward), "aclSetAclOpExecutorRepeatable");
        reserve_workspace(shape.backward_workspace);
    }
    return shape;
}

void DeviceBceLoss::prepare(int64_t count, bool with_backward) {
    if (count < 1 || count > capacity_)
        throw std::logic_error(
            fmt::format("executors for {} samples on a loss of capacity {}", count, capacity_));
    executors_for(count, with_backward);
}

void DeviceBceLoss::run_samples(const float* outputs, const float* targets, const float* weights,
                                int64_t count, float* losses, float* grad_outputs, float grad_scale) {
    if (count < 1 || count > capacity_)
        throw std::logic_error(
            fmt::format("batch of {} samples for a loss of capacity {}", count, capacity_));
    const bool with_backward = grad_outputs != nullptr;
    ShapeExecutors& shape = executors_for(count, with_backward);
    const size_t bytes = static_cast<size_t>(count) * sizeof(float);
    const size_t capacity_bytes = static_cast<size_t>(capacity_) * sizeof(float);
    check(aclrtMemcpy(outputs_, capacity_bytes, outputs, bytes, ACL_MEMCPY_HOST_TO_DEVICE), "aclrtMemcpy");
    check(aclrtMemcpy(targets_, capacity_bytes, targets, bytes, ACL_MEMCPY_HOST_TO_DEVICE), "aclrtMemcpy");
    check(aclrtMemcpy(weights_, capacity_bytes, weights, bytes, ACL_MEMCPY_HOST_TO_DEVICE), "aclrtMemcpy");
    if (with_backward && grad_scale != grad_output_value_) {
        check(aclrtMemcpy(grad_output_, sizeof(float), &grad_scale, sizeof(float), ACL_MEMCPY_HOST_TO_DEVICE),
              "aclrtMemcpy");
        grad_output_value_ = grad_scale;
    }
    if (kind_ == LossKind::kBceWithLogits) {
        check(aclnnBinaryCrossEntropyWithLogits(workspace_, workspace_bytes_, shape.forward, stream_),
              "aclnnBinaryCrossEntropyWithLogits");
        if (with_backward)
            check(aclnnBinaryCrossEntropyWithLogitsBackward(workspace_, workspace_bytes_, shape.backward,
                                                            stream_),
                  "aclnnBinaryCrossEntropyWithLogitsBackward");
    } else {
        check(aclnnBinaryCrossEntropy(workspace_, workspace_bytes_, shape.forward, stream_),
              "aclnnBinaryCrossEntropy");
        if (with_backward)
            check(aclnnBinaryCrossEntropyBackward(workspace_, workspace_bytes_, shape.backward, stream_),
                  "aclnnBinaryCrossEntropyBackward");
    }
    check(aclrtSynchronizeStream(stream_), "aclrtSynchronizeStream");
    check(aclrtMemcpy(losses, bytes, loss_, bytes, ACL_MEMCPY_DEVICE_TO_HOST), "aclrtMemcpy");
    if (with_backward)
        check(aclrtMemcpy(grad_outputs, bytes, grad_self_, bytes, ACL_MEMCPY_DEVICE_TO_HOST), "aclrtMemcpy");
}

float DeviceBceLoss::run(const float* outputs, const float* targets, const float* weights, int64_t count,
                         float* grad_outputs) {
    if (count >= 1 && count <= capacity_) host_losses_.resize(static_cast<size_t>(count));
    run_samples(outputs, targets, weights, count, host_losses_.data(), grad_outputs,
                static_cast<float>(1.0 / static_cast<double>(count)));
    double sum = 0;
    for (const float loss : host_losses_) sum += loss;
    return static_cast<float>(sum / static_cast<double>(count));
}

}  // namespace train
