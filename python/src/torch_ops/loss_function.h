// A loss computed by aclnn ops with one torch autograd node: the forward op into a fresh
// `out`, and per operand that has one, the op of its gradient. What differs between the
// losses of elementwise ops (which operands, which ops, the dtypes and shapes of their
// outputs) is a LossOps; apply_loss and its node are the autograd plumbing they share.
#pragma once

#include <ATen/ATen.h>

#include <array>
#include <string>

namespace nnplug::torch_ops {

// input, target and up to two optional operands (undefined when absent), as torch passes them
using Operands = std::array<at::Tensor, 4>;

// The attributes of one call: the reduction (aclnn's code; 3 is batchmean), a real one
// (beta, delta) and a flag (log_target); `batch` is input.size(0), batchmean's divisor.
struct Attrs {
    int64_t reduction = 1;
    double real = 0.0;
    bool flag = false;
    int64_t batch = 1;
};

using ForwardFn = void (*)(const Operands& operands, const Attrs& attrs, const at::Tensor& out);
// `operands` as the gradient ops take them (LossOps::mutual_broadcast); writes `out`.
using GradientFn = void (*)(const at::Tensor& grad, const Operands& operands, const Attrs& attrs,
                            const at::Tensor& out);

// Where an output's dtype comes from.
enum class OutDtype {
    promoted,  // input's and target's promoted type
    target,    // target's (the with-logits ops: CANN's rule)
    operand,   // the operand the gradient is for
};

struct LossOps {
    const char* name;                     // torch.nn.functional's name, for messages
    std::array<const char*, 4> operands;  // the operands' names, null past the last
    ForwardFn forward;
    std::array<GradientFn, 4> gradients;  // null where no aclnn op computes it
    OutDtype out_dtype;
    OutDtype grad_dtype;
    // input and target broadcast to each other: the loss has their common shape, and the
    // gradient ops (which promote nothing and divide a mean by their self's count) take both
    // as views of that shape in the promoted dtype. Otherwise the loss has input's shape.
    bool mutual_broadcast;
};

// The loss of `ops` through autograd; operands already resolved and checked.
at::Tensor apply_loss(const LossOps& ops, const Attrs& attrs, const Operands& operands);

// Each operand resolved (view bits applied) and checked against ops' dtypes: floats for all.
Operands checked_operands(const LossOps& ops, const at::Tensor& input, const at::Tensor& target,
                          const c10::optional<at::Tensor>& third, const c10::optional<at::Tensor>& fourth);

// torch's reduction word as aclnn's code (ValueError naming `loss` otherwise); batchmean
// only where `batchmean` is set.
int64_t reduction_code(const char* loss, c10::string_view word, bool batchmean = false);

// A tensor of the reduced loss's value where an op writes nothing (empty input): NaN for a
// mean, 0 for a sum; `shape` is the unreduced loss's.
at::Tensor reduced_out(at::IntArrayRef shape, at::ScalarType dtype, int64_t reduction, int64_t batch);

// Refuses a second derivative (create_graph=True): the gradient ops are not differentiable.
void refuse_second_derivative(const char* loss);

}  // namespace nnplug::torch_ops
