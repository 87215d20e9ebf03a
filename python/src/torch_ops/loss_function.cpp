#include "loss_function.h"

#include <torch/csrc/autograd/grad_mode.h>

#include <limits>

#include "aten_call.h"
#include "block_cache.h"

namespace nnplug::torch_ops {
namespace {

using torch::autograd::AutogradContext;
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

struct LossFunction : torch::autograd::Function<LossFunction> {
    static at::Tensor forward(AutogradContext* ctx, const LossOps* ops, const Attrs& attrs,
                              const at::Tensor& input, const at::Tensor& target,
                              const c10::optional<at::Tensor>& third,
                              const c10::optional<at::Tensor>& fourth) {
        const Operands operands{input, target, third.value_or(at::Tensor()), fourth.value_or(at::Tensor())};
        ctx->save_for_backward({operands[0], operands[1], operands[2], operands[3]});
        ctx->saved_data["ops"] = reinterpret_cast<int64_t>(ops);
        // three entries, not five: each is a hash map insert per call
        ctx->saved_data["attrs"] = attrs.batch << 3 | static_cast<int64_t>(attrs.flag) << 2 | attrs.reduction;
        ctx->saved_data["real"] = attrs.real;
        const std::vector<int64_t> shape = loss_shape(*ops, operands);
        const at::ScalarType dtype = dtype_of(ops->out_dtype, operands, 0);
        at::Tensor out = attrs.reduction == 0 ? empty_output(shape, dtype)
                                              : reduced_out(shape, dtype, attrs.reduction, attrs.batch);
        ops->forward(operands, attrs, out);
        const at::ScalarType result = promoted(operands);
        return out.scalar_type() == result ? out : out.to(result);
    }

    static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
        const auto* ops = reinterpret_cast<const LossOps*>(ctx->saved_data["ops"].toInt());
        refuse_second_derivative(ops->name);
        const int64_t packed = ctx->saved_data["attrs"].toInt();
        const Attrs attrs{packed & 3, ctx->saved_data["real"].toDouble(), (packed & 4) != 0, packed >> 3};
        const variable_list saved = ctx->get_saved_variables();
        const Operands operands{saved[0], saved[1], saved[2], saved[3]};
        Operands inputs;  // made once, for the first gradient that needs them
        variable_list grads(2 + operands.size());
        size_t variable = 0;  // the operand's index among the defined ones: autograd's input index
        for (size_t i = 0; i < operands.size(); ++i) {
            if (!operands[i].defined()) continue;
            if (!ctx->needs_input_grad(variable++)) continue;
            TORCH_CHECK(ops->gradients[i] != nullptr, "nnplug.torch: the derivative of ", ops->name, " for '",
                        ops->operands[i], "' is not implemented");
            if (!inputs[0].defined()) inputs = gradient_operands(*ops, operands);
            at::Tensor out = empty_output(loss_shape(*ops, operands), dtype_of(ops->grad_dtype, operands, i));
            ops->gradients[i](resolved(grad_outputs[0]), inputs, attrs, out);
            grads[2 + i] = as_operand(out, operands[i]);
        }
        return grads;
    }
};

}  // namespace

at::Tensor apply_loss(const LossOps& ops, const Attrs& attrs, const Operands& operands) {
    auto optional = [](const at::Tensor& t) {
        return t.defined() ? c10::optional<at::Tensor>(t) : c10::nullopt;
    };
    return LossFunction::apply(&ops, attrs, operands[0], operands[1], optional(operands[2]),
                               optional(operands[3]));
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
