#include "bce_call.h"

#include <aclnnop/aclnn_binary_cross_entropy.h>
#include <aclnnop/aclnn_binary_cross_entropy_backward.h>
#include <aclnnop/aclnn_binary_cross_entropy_with_logits.h>
#include <aclnnop/aclnn_binary_cross_entropy_with_logits_backward.h>
#include <aclnnop/aclnn_binary_cross_entropy_with_logits_target_backward.h>
#include <nnplug/dtype_convert.h>

#include <cstring>
#include <stdexcept>

namespace nnplug::bench {
namespace {

enum Slot { kGrad, kSelf, kTarget, kWeight, kPosWeight, kOut, kSlots };

// A small fast generator: filling 64M elements with mt19937 takes seconds.
class SplitMix {
public:
    explicit SplitMix(uint64_t seed) : state_(seed) {}
    float uniform(float low, float high) {
        state_ += 0x9e3779b97f4a7c15ull;
        uint64_t z = state_;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        return low + (high - low) * static_cast<float>(z >> 40) * 0x1p-24f;
    }

private:
    uint64_t state_;
};

std::vector<uint8_t> encoded(int64_t count, aclDataType dtype, SplitMix& random, float low, float high) {
    std::vector<uint8_t> bytes(static_cast<size_t>(count) * dtype_bytes(dtype));
    const int32_t plugin_dtype = dtype == ACL_FLOAT     ? NNPLUG_DTYPE_F32
                                 : dtype == ACL_FLOAT16 ? NNPLUG_DTYPE_F16
                                                        : NNPLUG_DTYPE_BF16;
    for (int64_t i = 0; i < count; ++i)
        store_from_f32(bytes.data(), plugin_dtype, i, random.uniform(low, high));
    return bytes;
}

void check(int status, const char* what) {
    if (status != 0) throw std::runtime_error(std::string(what) + " failed: " + aclGetRecentErrMsg());
}

}  // namespace

bool same_case(const BceCase& a, const BceCase& b) {
    return a.backward == b.backward && a.reduction == b.reduction && a.dtype == b.dtype &&
           a.numel == b.numel && a.logits == b.logits && a.target_grad == b.target_grad &&
           a.classes == b.classes;
}

std::string dtype_name(aclDataType dtype) {
    return dtype == ACL_FLOAT ? "float32" : dtype == ACL_FLOAT16 ? "float16" : "bfloat16";
}

size_t dtype_bytes(aclDataType dtype) {
    return dtype == ACL_FLOAT ? 4 : 2;
}

int64_t bytes_moved(const BceCase& c) {
    const int64_t element = static_cast<int64_t>(dtype_bytes(c.dtype));
    int64_t per_element = c.logits ? 2 : 3;  // self, target (, weight)
    if (c.backward)
        per_element += (c.reduction == 0 ? 1 : 0) + 1;  // gradOutput, out
    else
        per_element += c.reduction == 0 ? 1 : 0;  // out
    const int64_t once = (c.backward && c.reduction != 0 ? 1 : 0) +
                         (!c.backward && c.reduction != 0 ? 1 : 0) + (c.logits ? c.classes : 0);  // posWeight
    return (per_element * c.numel + once) * element;
}

HostOperands make_host_operands(const BceCase& c, uint32_t seed) {
    SplitMix random(seed);
    HostOperands host;
    const int64_t grad_count = c.reduction == 0 ? c.numel : 1;
    if (c.backward) host.grad = encoded(grad_count, c.dtype, random, -2.0f, 2.0f);
    host.self = c.logits ? encoded(c.numel, c.dtype, random, -6.0f, 6.0f)
                         : encoded(c.numel, c.dtype, random, 0.001f, 0.999f);
    host.target = encoded(c.numel, c.dtype, random, 0.0f, 1.0f);
    if (!c.logits) host.weight = encoded(c.numel, c.dtype, random, 0.0f, 2.0f);
    if (c.logits && c.classes > 0) host.pos_weight = encoded(c.classes, c.dtype, random, 0.5f, 4.0f);
    const int64_t out_count = !c.backward && c.reduction != 0 ? 1 : c.numel;
    host.out.assign(static_cast<size_t>(out_count) * dtype_bytes(c.dtype), 0);
    return host;
}

DeviceCase::DeviceCase(const BceCase& c, const HostOperands& host) : case_(c) {
    if (c.classes > 0 && (!c.logits || c.numel % c.classes != 0))
        throw std::invalid_argument("a posWeight case needs logits and a multiple of classes elements");
    const std::vector<uint8_t>* sources[kSlots] = {&host.grad,   &host.self,       &host.target,
                                                   &host.weight, &host.pos_weight, &host.out};
    const int64_t element = static_cast<int64_t>(dtype_bytes(c.dtype));
    for (int slot = 0; slot < kSlots; ++slot) {
        const auto& bytes = *sources[slot];
        if (bytes.empty()) continue;
        check(aclrtMalloc(&buffers_[slot], bytes.size(), ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc");
        check(
            aclrtMemcpy(buffers_[slot], bytes.size(), bytes.data(), bytes.size(), ACL_MEMCPY_HOST_TO_DEVICE),
            "aclrtMemcpy");
        const int64_t count = static_cast<int64_t>(bytes.size()) / element;
        const bool scalar = count == 1 && c.numel != 1;  // a 0-d gradOutput or reduced out
        // Contiguous: [count], or [rows, classes] beside a posWeight of [classes].
        const bool matrix = c.classes > 0 && slot != kPosWeight && count == c.numel;
        const int64_t shape[2] = {matrix ? count / c.classes : count, c.classes};
        const int64_t strides[2] = {matrix ? c.classes : 1, 1};
        tensors_[slot] = aclCreateTensor(shape,
                                         scalar   ? 0
                                         : matrix ? 2
                                                  : 1,
                                         c.dtype, strides, 0, ACL_FORMAT_ND, &count, 1, buffers_[slot]);
        if (tensors_[slot] == nullptr) check(1, "aclCreateTensor");
    }
}

DeviceCase::~DeviceCase() {
    for (int slot = 0; slot < kSlots; ++slot) {
        if (tensors_[slot] != nullptr) aclDestroyTensor(tensors_[slot]);
        if (buffers_[slot] != nullptr) aclrtFree(buffers_[slot]);
    }
    if (workspace_ != nullptr) aclrtFree(workspace_);
}

int DeviceCase::call() {
    uint64_t workspace_size = 0;
    aclOpExecutor* executor = nullptr;
    aclnnStatus status = ACLNN_SUCCESS;
    if (!case_.logits)
        status = case_.backward ? aclnnBinaryCrossEntropyBackwardGetWorkspaceSize(
                                      tensors_[kGrad], tensors_[kSelf], tensors_[kTarget], tensors_[kWeight],
                                      case_.reduction, tensors_[kOut], &workspace_size, &executor)
                                : aclnnBinaryCrossEntropyGetWorkspaceSize(
                                      tensors_[kSelf], tensors_[kTarget], tensors_[kWeight], case_.reduction,
                                      tensors_[kOut], &workspace_size, &executor);
    else if (!case_.backward)
        status = aclnnBinaryCrossEntropyWithLogitsGetWorkspaceSize(
            tensors_[kSelf], tensors_[kTarget], tensors_[kWeight], tensors_[kPosWeight], case_.reduction,
            tensors_[kOut], &workspace_size, &executor);
    else
        status = (case_.target_grad ? aclnnBinaryCrossEntropyWithLogitsTargetBackwardGetWorkspaceSize
                                    : aclnnBinaryCrossEntropyWithLogitsBackwardGetWorkspaceSize)(
            tensors_[kGrad], tensors_[kSelf], tensors_[kTarget], tensors_[kWeight], tensors_[kPosWeight],
            case_.reduction, tensors_[kOut], &workspace_size, &executor);
    if (status != ACLNN_SUCCESS) return status;
    if (workspace_size > workspace_capacity_) {
        if (workspace_ != nullptr) aclrtFree(workspace_);
        workspace_ = nullptr;
        workspace_capacity_ = 0;
        if (const aclError error = aclrtMalloc(&workspace_, workspace_size, ACL_MEM_MALLOC_HUGE_FIRST)) {
            aclDestroyAclOpExecutor(executor);
            return error;
        }
        workspace_capacity_ = workspace_size;
    }
    auto second_phase = case_.backward ? aclnnBinaryCrossEntropyBackward : aclnnBinaryCrossEntropy;
    if (case_.logits)
        second_phase = !case_.backward     ? aclnnBinaryCrossEntropyWithLogits
                       : case_.target_grad ? aclnnBinaryCrossEntropyWithLogitsTargetBackward
                                           : aclnnBinaryCrossEntropyWithLogitsBackward;
    status = second_phase(workspace_, workspace_size, executor, nullptr);
    if (status != ACLNN_SUCCESS) return status;
    return aclrtSynchronizeStream(nullptr);
}

std::vector<float> DeviceCase::read_out(int64_t count) const {
    const size_t element = dtype_bytes(case_.dtype);
    std::vector<uint8_t> bytes(static_cast<size_t>(count) * element);
    check(aclrtMemcpy(bytes.data(), bytes.size(), buffers_[kOut], bytes.size(), ACL_MEMCPY_DEVICE_TO_HOST),
          "aclrtMemcpy");
    std::vector<float> values(static_cast<size_t>(count));
    const int32_t plugin_dtype = case_.dtype == ACL_FLOAT     ? NNPLUG_DTYPE_F32
                                 : case_.dtype == ACL_FLOAT16 ? NNPLUG_DTYPE_F16
                                                              : NNPLUG_DTYPE_BF16;
    for (int64_t i = 0; i < count; ++i)
        values[static_cast<size_t>(i)] = load_as_f32(bytes.data(), plugin_dtype, i);
    return values;
}

}  // namespace nnplug::bench
