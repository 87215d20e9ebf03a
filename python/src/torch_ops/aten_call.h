// ATen tensors into aclnn calls, for the torch operators of nnplug._nnplug_torch: the checks
// of what a tensor may be (TypeError otherwise, as torch raises it), the runtime initialized
// on first use, and one call's operands, staged through device memory where the backend's
// memory is not host memory. A failing call raises nnplug.Error (status and message), also
// from inside torch's autograd engine.
#pragma once

#include <ATen/ATen.h>

#include <array>
#include <cstring>
#include <initializer_list>
#include <memory>

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

// One aclnn call: its operands, then its two phases, then the outputs copied back to host
// memory when staged. Where the ops read torch's memory in place, the executor of a call is
// kept (per thread, the most recent few) and run again for the next call with the same op,
// attributes, dtypes, shapes and strides, its operands moved to the new call's memory with
// aclSetTensorAddr: such a call skips the first phase.
class AclCall {
public:
    static constexpr size_t kMaxOperands = 8;

    AclCall();  // initializes the runtime (nnplug.ensure_initialized()) if it is not
    AclCall(const AclCall&) = delete;
    AclCall& operator=(const AclCall&) = delete;

    // The next operand in the aclnn signature's order, inputs before outputs: its aclTensor,
    // which the first phase reads through the returned reference (made just before it runs;
    // null for an undefined tensor: an absent optional operand).
    aclTensor* const& in(const at::Tensor& tensor) { return add(tensor, false); }
    // An output, written back to `tensor` after the run.
    aclTensor* const& out(const at::Tensor& tensor) { return add(tensor, true); }

    // Runs `first(&workspace_size, &executor)`, the first phase, then `second`; `attrs` are
    // the attribute values `first` passes (as bits), which a kept executor must share.
    template <class FirstPhase>
    void run(const char* name, std::initializer_list<int64_t> attrs, FirstPhase first, python::RunFn second) {
        if (run_kept(name, attrs, second)) return;
        make_tensors();
        uint64_t workspace_size = 0;
        aclOpExecutor* executor = nullptr;
        const aclnnStatus status = first(&workspace_size, &executor);
        finish(name, attrs, status, executor, workspace_size, second);
    }

private:
    struct Operand {
        at::Tensor tensor;  // undefined: absent
        bool output = false;
    };
    aclTensor* const& add(const at::Tensor& tensor, bool output);
    bool run_kept(const char* name, std::initializer_list<int64_t> attrs, python::RunFn second);
    void make_tensors();
    void finish(const char* name, std::initializer_list<int64_t> attrs, aclnnStatus status,
                aclOpExecutor* executor, uint64_t workspace_size, python::RunFn second);

    bool stage_;
    size_t count_ = 0;
    std::array<Operand, kMaxOperands> operands_;
    std::array<aclTensor*, kMaxOperands> handles_{};
    std::array<std::unique_ptr<python::OperandTensor>, kMaxOperands> tensors_;
};

// An attribute as the bits a kept executor's key holds.
inline int64_t attr_bits(double value) {
    int64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    return bits;
}
inline int64_t attr_bits(float value) {
    return attr_bits(static_cast<double>(value));
}
inline int64_t attr_bits(int64_t value) {
    return value;
}
inline int64_t attr_bits(bool value) {
    return value ? 1 : 0;
}

}  // namespace nnplug::torch_ops
