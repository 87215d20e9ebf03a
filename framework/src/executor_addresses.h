// aclSetInputTensorAddr, aclSetOutputTensorAddr and aclSetTensorAddr: a repeatable
// executor's operands moved to new addresses between runs, without a new first phase. The
// views stay those the first phase checked; a new address is checked as a first phase
// checks one (device, aclrtMalloc block, the backend), and the operands' overlap by the
// executor's next run (aclOpExecutor::moved), once every move is made.
#pragma once

#include <aclnn/acl_meta.h>

#include <cstddef>

namespace nnplug {

// Which operands an index counts, in the aclnn signature's order.
enum class OperandGroup { kInputs, kOutputs, kAll };

aclnnStatus set_tensor_address(const char* api, OperandGroup group, aclOpExecutor* executor, size_t index,
                               aclTensor* tensor, void* addr) noexcept;

}  // namespace nnplug
