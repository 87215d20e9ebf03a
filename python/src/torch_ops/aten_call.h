// ATen tensors into aclnn calls, for the torch operators of nnplug._nnplug_torch: the checks
// of what a tensor may be (TypeError otherwise, as torch raises it), the runtime initialized
// on first use, and one call's operands, staged through device memory where the backend's
// memory is not host memory. A failing call raises nnplug.Error (status and message), also
// from inside torch's autograd engine.
#pragma once

#include <ATen/ATen.h>

#include <deque>
#include <initializer_list>
#include <vector>

#include "../op_call.h"

namespace nnplug::torch_ops {

// Reads the runtime's state from nnplug._nnplug (at import of the module, GIL held).
void bind_runtime_state();

// The tensor as torch's values: a negative or conjugate bit applied (as torch's own kernels
// do) rather than read as raw memory. Undefined stays undefined.
at::Tensor resolved(const at::Tensor& tensor);

// Raises nnplug.Error with the failure's status and message (as python_error, which torch
// restores where its call from Python ends).
[[noreturn]] void raise_nnplug_error(const python::AclFailure& failure);

// Refuses (TypeError, naming `op` and `name`) a tensor that is not a strided CPU tensor of
// one of `dtypes`, or that carries a view bit resolved() did not apply.
void check_operand(const at::Tensor& tensor, const char* op, const char* name,
                   std::initializer_list<at::ScalarType> dtypes);
inline constexpr std::initializer_list<at::ScalarType> kFloatTypes = {at::kFloat, at::kHalf, at::kBFloat16};

// One aclnn call: its operands as aclTensors, then its two phases, then the outputs copied
// back to host memory when staged.
class AclCall {
public:
    AclCall();  // initializes the runtime (nnplug.ensure_initialized()) if it is not
    AclCall(const AclCall&) = delete;
    AclCall& operator=(const AclCall&) = delete;

    // An input (null for an undefined tensor: an absent optional operand).
    const aclTensor* in(const at::Tensor& tensor);
    // An output, written back to `tensor` after the run.
    aclTensor* out(const at::Tensor& tensor);

    // Runs `first(&workspace_size, &executor)`, the first phase, then `second`.
    template <class FirstPhase>
    void run(const char* name, FirstPhase first, python::RunFn second) {
        uint64_t workspace_size = 0;
        aclOpExecutor* executor = nullptr;
        const aclnnStatus status = first(&workspace_size, &executor);
        finish(name, status, executor, workspace_size, second);
    }

private:
    void finish(const char* name, aclnnStatus status, aclOpExecutor* executor, uint64_t workspace_size,
                python::RunFn second);
    aclTensor* add(const at::Tensor& tensor);

    bool stage_;
    std::deque<python::OperandTensor> operands_;  // one allocation for a call's few
    std::vector<const python::OperandTensor*> outputs_;
};

}  // namespace nnplug::torch_ops
