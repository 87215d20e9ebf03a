// The multi-class losses as torch operators: torch.ops.nnplug.nll_loss (aclnnNLLLoss and
// aclnnNLLLoss2d) and torch.ops.nnplug.cross_entropy (aclnnCrossEntropyLoss), with torch's
// shapes: input (C), (N, C) or (N, C, d1, ...), target without the class axis.
#include <torch/library.h>

#include <cstring>
#include <limits>
#include <string>

#include "aclnnop/aclnn_cross_entropy_loss.h"
#include "aclnnop/aclnn_cross_entropy_loss_grad.h"
#include "aclnnop/aclnn_nll_loss.h"
#include "aclnnop/aclnn_nll_loss2d.h"
#include "aclnnop/aclnn_nll_loss2d_backward.h"
#include "aclnnop/aclnn_nll_loss_backward.h"
#include "aten_call.h"
#include "block_cache.h"
#include "loss_function.h"
#include "losses.h"

namespace nnplug::torch_ops {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

constexpr std::initializer_list<at::ScalarType> kClassIndexTypes = {at::kLong, at::kInt, at::kByte};

// input's dims without the class axis (dim 1; dim 0 of a (C) input) must be target's.
void check_target_shape(const char* loss, const at::Tensor& input, const at::Tensor& target) {
    std::vector<int64_t> expected = input.sizes().vec();
    expected.erase(expected.begin() + (input.dim() == 1 ? 0 : 1));
    TORCH_CHECK_VALUE(target.sizes().vec() == expected, "nnplug.torch.", loss, ": target has shape ",
                      target.sizes(), " where input ", input.sizes(), " needs ", at::IntArrayRef(expected));
}

int64_t class_count(const at::Tensor& input) {
    return input.dim() == 1 ? input.size(0) : input.size(1);
}

// The operands and attributes both losses resolve, check and keep for the backward.
struct ClassCall {
    at::Tensor input;   // as the op takes it
    at::Tensor target;  // as the op takes it
    at::Tensor weight;  // required by the NLL ops; undefined: none (cross-entropy)
    int64_t reduction;
    int64_t ignore_index;
    double label_smoothing = 0.0;
};

// Kept in few saved-data entries (each is a hash map insert per call): input's own shape
// only where the op's differs.
void save(AutogradContext* ctx, const ClassCall& call, const at::Tensor& extra, at::IntArrayRef input_shape,
          bool has_weight) {
    ctx->save_for_backward({call.input, call.target, call.weight, extra});
    ctx->saved_data["packed"] = call.reduction | static_cast<int64_t>(has_weight) << 2;
    ctx->saved_data["ignore_index"] = call.ignore_index;
    if (call.label_smoothing != 0.0) ctx->saved_data["label_smoothing"] = call.label_smoothing;
    if (input_shape != call.input.sizes()) ctx->saved_data["input_shape"] = input_shape.vec();
}

// The call as saved, and the tensor saved with it (totalWeight, logProb) in `extra`.
ClassCall restore(AutogradContext* ctx, at::Tensor& extra) {
    const variable_list saved = ctx->get_saved_variables();
    extra = saved[3];
    const auto smoothing = ctx->saved_data.find("label_smoothing");
    return ClassCall{saved[0],
                     saved[1],
                     saved[2],
                     ctx->saved_data["packed"].toInt() & 3,
                     ctx->saved_data["ignore_index"].toInt(),
                     smoothing == ctx->saved_data.end() ? 0.0 : smoothing->second.toDouble()};
}

at::Tensor in_dtype(const at::Tensor& tensor, at::ScalarType dtype) {
    return tensor.scalar_type() == dtype ? tensor : tensor.to(dtype);
}

bool had_weight(AutogradContext* ctx) {
    return (ctx->saved_data["packed"].toInt() & 4) != 0;
}

std::vector<int64_t> input_shape(AutogradContext* ctx, const ClassCall& call) {
    const auto shape = ctx->saved_data.find("input_shape");
    return shape == ctx->saved_data.end() ? call.input.sizes().vec() : shape->second.toIntVector();
}

// A weight of ones for the NLL ops, which require one: the last made on this thread is
// reused (read only) while C and the dtype stay.
at::Tensor ones_weight(int64_t classes, at::ScalarType dtype) {
    thread_local at::Tensor last;
    if (!last.defined() || last.size(0) != classes || last.scalar_type() != dtype)
        last = at::ones({classes}, at::TensorOptions(dtype));
    return last;
}

// Refuses the gradient of a weight that asks for one: no aclnn op computes it.
void refuse_weight_gradient(AutogradContext* ctx, const char* loss, bool has_weight) {
    TORCH_CHECK(!has_weight || !ctx->needs_input_grad(2), "nnplug.torch: the derivative of ", loss,
                " for 'weight' is not implemented");
}

// ---- nll_loss

void nll_forward(const ClassCall& c, const at::Tensor& out, const at::Tensor& total_weight) {
    AclCall acl;
    aclTensor* const& self = acl.in(c.input);
    aclTensor* const& target = acl.in(c.target);
    aclTensor* const& weight = acl.in(c.weight);
    aclTensor* const& result = acl.out(out);
    aclTensor* const& total = acl.out(total_weight);
    const bool planar = c.input.dim() == 4;
    acl.run(
        planar ? "aclnnNLLLoss2d" : "aclnnNLLLoss", {c.reduction, c.ignore_index},
        [&](uint64_t* size, aclOpExecutor** executor) {
            return (planar ? aclnnNLLLoss2dGetWorkspaceSize : aclnnNLLLossGetWorkspaceSize)(
                self, target, weight, c.reduction, c.ignore_index, result, total, size, executor);
        },
        planar ? aclnnNLLLoss2d : aclnnNLLLoss);
}

void nll_backward(const ClassCall& c, const at::Tensor& grad, const at::Tensor& total_weight,
                  const at::Tensor& out) {
    AclCall acl;
    aclTensor* const& g = acl.in(grad);
    aclTensor* const& self = acl.in(c.input);
    aclTensor* const& target = acl.in(c.target);
    aclTensor* const& weight = acl.in(c.weight);
    aclTensor* const& total = acl.in(total_weight);
    aclTensor* const& result = acl.out(out);
    if (c.input.dim() == 4) {
        acl.run(
            "aclnnNLLLoss2dBackward", {c.reduction, c.ignore_index},
            [&](uint64_t* size, aclOpExecutor** executor) {
                return aclnnNLLLoss2dBackwardGetWorkspaceSize(g, self, target, weight, c.reduction,
                                                              c.ignore_index, total, result, size, executor);
            },
            aclnnNLLLoss2dBackward);
    } else {
        acl.run(
            "aclnnNLLLossBackward", {c.reduction, c.ignore_index},
            [&](uint64_t* size, aclOpExecutor** executor) {
                return aclnnNLLLossBackwardGetWorkspaceSize(g, self, target, weight, c.reduction,
                                                            c.ignore_index, total, result, size, executor);
            },
            aclnnNLLLossBackward);
    }
}

struct NllLossFunction : torch::autograd::Function<NllLossFunction> {
    static at::Tensor forward(AutogradContext* ctx, const at::Tensor& input, const at::Tensor& target,
                              const c10::optional<at::Tensor>& weight, const ClassCall& call) {
        const at::ScalarType dtype = call.input.scalar_type();
        at::Tensor out = call.reduction == 0 ? empty_output(call.target.sizes(), dtype)
                                             : at::empty({}, at::TensorOptions(dtype));
        at::Tensor total_weight = at::empty({}, at::TensorOptions(dtype));  // written unless reduction none
        nll_forward(call, out, total_weight);
        save(ctx, call, total_weight, input.sizes(), weight.has_value() && weight->defined());
        return call.reduction == 0 ? out.reshape(target.sizes()) : out;
    }

    static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
        refuse_second_derivative("nll_loss");
        refuse_weight_gradient(ctx, "nll_loss", had_weight(ctx));
        if (!ctx->needs_input_grad(0)) return {at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
        at::Tensor total_weight;
        const ClassCall call = restore(ctx, total_weight);
        at::Tensor grad = in_dtype(resolved(grad_outputs[0]), call.input.scalar_type());
        if (call.reduction == 0) grad = grad.reshape(call.target.sizes());
        at::Tensor out = empty_output(call.input.sizes(), call.input.scalar_type());
        nll_backward(call, grad, total_weight, out);
        // input's own shape where the op's differs (a reshape costs about 0.4 us)
        const auto shape = ctx->saved_data.find("input_shape");
        if (shape != ctx->saved_data.end()) out = out.reshape(shape->second.toIntVector());
        return {out, at::Tensor(), at::Tensor(), at::Tensor()};
    }
};

}  // namespace

at::Tensor nll_loss(const at::Tensor& input_given, const at::Tensor& target_given,
                    const c10::optional<at::Tensor>& weight_given, c10::string_view reduction,
                    int64_t ignore_index) {
    const at::Tensor input = resolved(input_given);
    const at::Tensor target = resolved(target_given);
    check_operand(input, "nll_loss", "input", kFloatTypes);
    check_operand(target, "nll_loss", "target", kClassIndexTypes);
    ClassCall call{input, target, resolved(weight_given.value_or(at::Tensor())),
                   reduction_code("nll_loss", reduction), ignore_index};
    if (call.weight.defined()) {
        check_operand(call.weight, "nll_loss", "weight", kFloatTypes);
        call.weight = call.weight.to(input.scalar_type());
    } else if (input.dim() >= 1) {
        call.weight = ones_weight(class_count(input), input.scalar_type());
    }
    if (input.dim() == 3 || input.dim() > 4) {  // as torch does: the 2d op over (N, C, 1, d1·d2·...)
        check_target_shape("nll_loss", input, target);
        call.input = input.reshape({input.size(0), input.size(1), 1, -1});
        call.target = target.reshape({target.size(0), 1, -1});
    }
    return NllLossFunction::apply(input_given, target_given, weight_given, call);
}

namespace {

// ---- cross_entropy

// aclnn's reduction word for a code, in a buffer the op's `char*` may point to.
struct ReductionWord {
    explicit ReductionWord(int64_t reduction) {
        std::strcpy(word, reduction == 0 ? "none" : reduction == 1 ? "mean" : "sum");
    }
    char word[8];
};

void cross_entropy_forward(const ClassCall& c, const at::Tensor& loss, const at::Tensor& log_prob) {
    // zloss and lseForZloss are never written (not requested): an element of this thread's
    // to point both at, made once per dtype.
    thread_local at::Tensor unused;
    if (!unused.defined() || unused.scalar_type() != c.input.scalar_type())
        unused = at::empty({1}, at::TensorOptions(c.input.scalar_type()));
    AclCall acl;
    aclTensor* const& input = acl.in(c.input);
    aclTensor* const& target = acl.in(c.target);
    aclTensor* const& weight = acl.in(c.weight);
    aclTensor* const& loss_out = acl.out(loss);
    aclTensor* const& log_prob_out = acl.out(log_prob);
    aclTensor* const& zloss = acl.in(unused);
    aclTensor* const& lse = acl.in(unused);
    ReductionWord reduction(c.reduction);
    acl.run(
        "aclnnCrossEntropyLoss", {c.reduction, c.ignore_index, attr_bits(c.label_smoothing)},
        [&](uint64_t* size, aclOpExecutor** executor) {
            return aclnnCrossEntropyLossGetWorkspaceSize(input, target, weight, reduction.word,
                                                         c.ignore_index, c.label_smoothing, 0.0, false,
                                                         loss_out, log_prob_out, zloss, lse, size, executor);
        },
        aclnnCrossEntropyLoss);
}

void cross_entropy_backward(const ClassCall& c, const at::Tensor& grad, const at::Tensor& log_prob,
                            const at::Tensor& out) {
    AclCall acl;
    aclTensor* const& g = acl.in(grad);
    aclTensor* const& log_probs = acl.in(log_prob);
    aclTensor* const& target = acl.in(c.target);
    aclTensor* const& weight = acl.in(c.weight);
    acl.in(at::Tensor());  // gradZlossOptional and lseForZlossOptional: absent, but counted
    acl.in(at::Tensor());
    aclTensor* const& result = acl.out(out);
    ReductionWord reduction(c.reduction);
    acl.run(
        "aclnnCrossEntropyLossGrad", {c.reduction, c.ignore_index, attr_bits(c.label_smoothing)},
        [&](uint64_t* size, aclOpExecutor** executor) {
            return aclnnCrossEntropyLossGradGetWorkspaceSize(g, log_probs, target, weight, nullptr, nullptr,
                                                             reduction.word, c.ignore_index,
                                                             c.label_smoothing, 0.0, result, size, executor);
        },
        aclnnCrossEntropyLossGrad);
}

// The gradient of (N·d1·..., C) rows back in input's layout: (N, C, d1, ...) or (C).
at::Tensor rows_to_input_layout(const at::Tensor& rows, at::IntArrayRef input_shape) {
    if (input_shape.size() <= 2) return rows.reshape(input_shape);
    std::vector<int64_t> moved = input_shape.vec();
    moved.erase(moved.begin() + 1);
    moved.push_back(input_shape[1]);
    return rows.reshape(moved).movedim(-1, 1);
}

struct CrossEntropyFunction : torch::autograd::Function<CrossEntropyFunction> {
    static at::Tensor forward(AutogradContext* ctx, const at::Tensor& input, const at::Tensor& target,
                              const c10::optional<at::Tensor>& weight, const ClassCall& call) {
        const auto options = at::TensorOptions(call.input.scalar_type());
        at::Tensor loss = call.reduction == 0 ? empty_output({call.input.size(0)}, call.input.scalar_type())
                                              : at::empty({}, options);
        at::Tensor log_prob = empty_output(call.input.sizes(), call.input.scalar_type());
        cross_entropy_forward(call, loss, log_prob);
        save(ctx, call, log_prob, input.sizes(), weight.has_value() && weight->defined());
        return call.reduction == 0 ? loss.reshape(target.sizes()) : loss;
    }

    static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
        refuse_second_derivative("cross_entropy");
        refuse_weight_gradient(ctx, "cross_entropy", had_weight(ctx));
        if (!ctx->needs_input_grad(0)) return {at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
        at::Tensor log_prob;
        const ClassCall call = restore(ctx, log_prob);
        at::Tensor grad = in_dtype(resolved(grad_outputs[0]), call.input.scalar_type());
        if (call.reduction == 0) grad = grad.reshape({call.input.size(0)});
        at::Tensor out = empty_output(call.input.sizes(), call.input.scalar_type());
        cross_entropy_backward(call, grad, log_prob, out);
        return {rows_to_input_layout(out, input_shape(ctx, call)), at::Tensor(), at::Tensor(), at::Tensor()};
    }
};

// Where target holds `value`: read in place when contiguous (the common case, per call).
template <class T>
int64_t first_index_of(const at::Tensor& target, int64_t value) {
    const at::Tensor flat = target.contiguous();
    const T* data = flat.data_ptr<T>();
    for (int64_t i = 0; i < flat.numel(); ++i)
        if (static_cast<int64_t>(data[i]) == value) return i;
    return -1;
}

int64_t first_index_of(const at::Tensor& target, int64_t value) {
    if (target.scalar_type() == at::kLong) return first_index_of<int64_t>(target, value);
    if (target.scalar_type() == at::kInt) return first_index_of<int32_t>(target, value);
    return first_index_of<uint8_t>(target, value);
}

// torch ignores the targets equal to a negative ignore_index (its default is -100), where
// aclnnCrossEntropyLoss ignores nothing for one: those targets become C, the op's
// ignoreIndex, which no class index equals. A target already equal to C is refused first,
// as the op would refuse it.
void map_negative_ignore_index(ClassCall& call, int64_t classes) {
    if (call.ignore_index >= 0 || first_index_of(call.target, call.ignore_index) < 0) return;
    const int64_t at_c = first_index_of(call.target, classes);
    if (at_c >= 0) {
        raise_nnplug_error(python::AclFailure(
            ACLNN_ERR_PARAM_INVALID, "aclnnCrossEntropyLoss: target element " + std::to_string(at_c) +
                                         " is " + std::to_string(classes) + ", not a class index in [0, " +
                                         std::to_string(classes) + ") nor ignoreIndex " +
                                         std::to_string(call.ignore_index) + " (status 161002)"));
    }
    call.target = call.target.masked_fill(call.target == call.ignore_index, classes);
    call.ignore_index = classes;
}

}  // namespace

at::Tensor cross_entropy(const at::Tensor& input_given, const at::Tensor& target_given,
                         const c10::optional<at::Tensor>& weight_given, c10::string_view reduction,
                         int64_t ignore_index, double label_smoothing) {
    const at::Tensor input = resolved(input_given);
    at::Tensor target = resolved(target_given);
    check_operand(input, "cross_entropy", "input", kFloatTypes);
    TORCH_CHECK_TYPE(!at::isFloatingType(target.scalar_type()), "nnplug.torch.cross_entropy: target is a ",
                     target.scalar_type(),
                     " tensor of class probabilities; nnplug takes class indices (torch.int64)");
    check_operand(target, "cross_entropy", "target", {at::kLong, at::kInt});
    // Most SoCs' CrossEntropyLoss kernels take int64 targets only (docs/ops/cross_entropy_loss.md).
    if (target.scalar_type() == at::kInt) target = target.to(at::kLong);
    ClassCall call{input,
                   target,
                   resolved(weight_given.value_or(at::Tensor())),
                   reduction_code("cross_entropy", reduction),
                   ignore_index,
                   label_smoothing};
    if (call.weight.defined()) {
        check_operand(call.weight, "cross_entropy", "weight", kFloatTypes);
        call.weight = call.weight.to(at::kFloat);  // the op's weight is float32 whatever the input's dtype
    }
    if (input.dim() == 1) {  // one row: (1, C) and (1)
        call.input = input.unsqueeze(0);
        call.target = target.reshape({1});
    } else if (input.dim() > 2) {  // the class axis last, every other position a row
        check_target_shape("cross_entropy", input, target);
        call.input = input.movedim(1, -1).reshape({-1, input.size(1)});
        call.target = target.reshape({-1});
    }
    if (call.input.dim() == 2) map_negative_ignore_index(call, call.input.size(1));
    return CrossEntropyFunction::apply(input_given, target_given, weight_given, call);
}

}  // namespace nnplug::torch_ops

TORCH_LIBRARY_FRAGMENT(nnplug, m) {
    m.def(
        "nll_loss(Tensor input, Tensor target, Tensor? weight=None, str reduction='mean', int "
        "ignore_index=-100) "
        "-> Tensor",
        &nnplug::torch_ops::nll_loss);
    m.def(
        "cross_entropy(Tensor input, Tensor target, Tensor? weight=None, str reduction='mean', "
        "int ignore_index=-100, float label_smoothing=0.0) -> Tensor",
        &nnplug::torch_ops::cross_entropy);
}
