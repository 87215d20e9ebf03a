#include "loss_function.h"

#include <torch/csrc/autograd/functions/utils.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <cctype>
#include <limits>

#include "aten_call.h"
#include "block_cache.h"

namespace nnplug::torch_ops {
namespace {

using torch::autograd::SavedVariable;
using torch::autograd::variable_list;

at::ScalarType promoted(const Operands& operands) {
    return at::promote_types(operands[0].scalar_type(), operands[1].scalar_type());
}

at::ScalarType dtype_of(OutDtype rule, const Operands& operands, size_t operand) {
    if (rule == OutDtype::promoted) return promoted(operands);
    return operands[rule == OutDtype::target ? 1 : operand].scalar_type();
}

// input's and target's common shape; input's when they do not broadcast, so that the op
// itself refuses them with its message.
std::vector<int64_t> loss_shape(const LossOps& ops, const Operands& operands) {
    const at::IntArrayRef a = operands[0].sizes();
    if (!ops.mutual_broadcast) return a.vec();
    const at::IntArrayRef b = operands[1].sizes();
    std::vector<int64_t> shape(std::max(a.size(), b.size()));
    for (size_t i = 0; i < shape.size(); ++i) {
        const int64_t x = i < shape.size() - a.size() ? 1 : a[i - (shape.size() - a.size())];
        const int64_t y = i < shape.size() - b.size() ? 1 : b[i - (shape.size() - b.size())];
        if (x != y && x != 1 && y != 1) return a.vec();
        shape[i] = x == 1 ? y : x;
    }
    return shape;
}

// The operands as the gradient ops take them (LossOps::mutual_broadcast); converted or
// expanded only where they differ (a call costs about a microsecond).
Operands gradient_operands(const LossOps& ops, const Operands& operands) {
    if (!ops.mutual_broadcast) return operands;
    const at::ScalarType dtype = promoted(operands);
    const std::vector<int64_t> shape = loss_shape(ops, operands);
    Operands expanded = operands;
    for (size_t i = 0; i < 2; ++i) {
        if (expanded[i].scalar_type() != dtype) expanded[i] = expanded[i].to(dtype);
        if (expanded[i].sizes() != at::IntArrayRef(shape)) expanded[i] = expanded[i].expand(shape);
    }
    return expanded;
}

// A gradient of the loss's shape and a gradient op's dtype as its operand's.
at::Tensor as_operand(at::Tensor grad, const at::Tensor& operand) {
    if (grad.sizes() != operand.sizes()) grad = grad.sum_to_size(operand.sizes());
    if (grad.scalar_type() != operand.scalar_type()) grad = grad.to(operand.scalar_type());
    return grad;
}

// The gradient node of a loss, written as torch's generated ones are: what it keeps are
// members, where a torch::autograd::Function keeps them in string-keyed maps and checks its
// outputs generically (together about a microsecond a call). Its next edges are the four
// operands' (an absent one's empty).
struct LossBackward : torch::autograd::Node {
    const LossOps* ops = nullptr;
    Attrs attrs;
    std::array<SavedVariable, 4> operands;

    std::string name() const override {  // torch's style: mse_loss's is MseLossBackward
        std::string name;
        for (const char* c = ops->name; *c != '\0'; ++c)
            if (*c != '_') name += c == ops->name || c[-1] == '_' ? static_cast<char>(std::toupper(*c)) : *c;
        return name + "Backward";
    }
    void release_variables() override {
        for (SavedVariable& saved : operands) saved.reset_data();
    }
    variable_list apply(variable_list&& grads) override;
};

variable_list LossBackward::apply(variable_list&& grads) {
    refuse_second_derivative(ops->name);
    Operands saved;
    for (size_t i = 0; i < saved.size(); ++i) saved[i] = operands[i].unpack();
    const at::Tensor grad = resolved(grads[0].defined() ? grads[0] : input_metadata(0).zeros_like());
    Operands inputs;  // made once, for the first gradient that needs them
    variable_list result(saved.size());
    for (size_t i = 0; i < saved.size(); ++i) {
        if (!saved[i].defined() || !task_should_compute_output(i)) continue;
        TORCH_CHECK(ops->gradients[i] != nullptr, "nnplug.torch: the derivative of ", ops->name, " for '",
                    ops->operands[i], "' is not implemented");
        if (!inputs[0].defined()) inputs = gradient_operands(*ops, saved);
        at::Tensor out = empty_output(loss_shape(*ops, saved), dtype_of(ops->grad_dtype, saved, i));
        ops->gradients[i](grad, inputs, attrs, out);
        result[i] = as_operand(out, saved[i]);
    }
    return result;
}

}  // namespace

at::Tensor apply_loss(const LossOps& ops, const Attrs& attrs, const Operands& operands) {
    const std::vector<int64_t> shape = loss_shape(ops, operands);
    const at::ScalarType dtype = dtype_of(ops.out_dtype, operands, 0);
    at::Tensor out = attrs.reduction == 0 ? empty_output(shape, dtype)
                                          : reduced_out(shape, dtype, attrs.reduction, attrs.batch);
    {
        const at::NoGradGuard no_grad;  // what the op's conversions make is no part of the graph
        ops.forward(operands, attrs, out);
    }
    if (torch::autograd::compute_requires_grad(operands[0], operands[1], operands[2], operands[3])) {
        const std::shared_ptr<LossBackward> node(new LossBackward(), torch::autograd::deleteNode);
        node->set_next_edges(
            torch::autograd::collect_next_edges(operands[0], operands[1], operands[2], operands[3]));
        node->ops = &ops;
        node->attrs = attrs;
        for (size_t i = 0; i < operands.size(); ++i) node->operands[i] = SavedVariable(operands[i], false);
        torch::autograd::set_history(out, node);
    }
    const at::ScalarType result = promoted(operands);
    return out.scalar_type() == result ? out : out.to(result);
}

Operands checked_operands(const LossOps& ops, const at::Tensor& input, const at::Tensor& target,
                          const c10::optional<at::Tensor>& third, const c10::optional<at::Tensor>& fourth) {
    Operands operands{resolved(input), resolved(target), resolved(third.value_or(at::Tensor())),
                      resolved(fourth.value_or(at::Tensor()))};
    for (size_t i = 0; i < operands.size(); ++i)
        if (operands[i].defined()) check_operand(operands[i], ops.name, ops.operands[i], kFloatTypes);
    return operands;
}

int64_t reduction_code(const char* loss, c10::string_view word, bool batchmean) {
    if (word == "none") return 0;
    if (word == "mean") return 1;
    if (word == "sum") return 2;
    if (batchmean && word == "batchmean") return 3;
    TORCH_CHECK_VALUE(false, "nnplug.torch.", loss, ": reduction must be 'none', 'mean', ",
                      batchmean ? "'sum' or 'batchmean'" : "or 'sum'", ", not '", std::string(word), "'");
}

at::Tensor reduced_out(at::IntArrayRef shape, at::ScalarType dtype, int64_t reduction, int64_t batch) {
    at::Tensor out = at::empty({}, at::TensorOptions(dtype));
    if (c10::multiply_integers(shape) == 0) {
        const bool nan = reduction == 1 || (reduction == 3 && batch == 0);
        out.fill_(nan ? std::numeric_limits<double>::quiet_NaN() : 0.0);
    }
    return out;
}

void refuse_second_derivative(const char* loss) {
    TORCH_CHECK(!torch::autograd::GradMode::is_enabled(), "nnplug.torch: ", loss,
                " has no second derivatives: its gradient ops are not differentiable (create_graph=True, "
                "e.g. a gradient penalty, is not supported)");
}

}  // namespace nnplug::torch_ops
