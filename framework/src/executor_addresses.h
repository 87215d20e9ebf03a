// aclSetInputTensorAddr, aclSetOutputTensorAddr and aclSetTensorAddr: a repeatable
// executor's operands moved to new addresses between runs, without a new first phase. The
// views stay those the first phase checked; the addresses are checked as a first phase
// checks them (device, aclrtMalloc block, overlap with the other operands, the backend).
#pragma once

#include <aclnn/acl_meta.h>

#include <cstddef>

namespace nnplug {

// Which operands an index counts, in the aclnn signature's order.
enum class OperandGroup { kInputs, kOutputs, kAll };

aclnnStatus set_tensor_address(const char* api, OperandGroup group, aclOpExecutor* executor, size_t index,
                               aclTensor* tensor, void* addr) noexcept;

}  // namespace nnplug
