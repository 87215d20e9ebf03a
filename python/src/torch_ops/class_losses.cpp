// The multi-class losses as torch operators: torch.ops.nnplug.nll_loss (aclnnNLLLoss and
// aclnnNLLLoss2d) and torch.ops.nnplug.cross_entropy (aclnnCrossEntropyLoss), with torch's
// shapes: input (C), (N, C) or (N, C, d1, ...), target without the class axis.
#include <torch/csrc/autograd/functions/utils.h>
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

using torch::autograd::SavedVariable;
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

at::Tensor in_dtype(const at::Tensor& tensor, at::ScalarType dtype) {
    return tensor.scalar_type() == dtype ? tensor : tensor.to(dtype);
}

// A weight of ones for the NLL ops, which require one: the last made on this thread is
// reused (read only) while C and the dtype stay.
at::Tensor ones_weight(int64_t classes, at::ScalarType dtype) {
    thread_local at::Tensor last;
    if (!last.defined() || last.size(0) != classes || last.scalar_type() != dtype)
        last = at::ones({classes}, at::TensorOptions(dtype));
    return last;
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

// The gradient node of both losses, written as torch's generated ones are: what it keeps are
// members, where a torch::autograd::Function keeps them in string-keyed maps and checks its
// outputs generically (together about a microsecond a call). Its next edges are input's,
// target's and weight's.
struct ClassLossBackward : torch::autograd::Node {
    bool cross_entropy = false;
    SavedVariable input, target, weight;  // as the ops take them
    SavedVariable extra;                  // NLLLoss's totalWeight, CrossEntropyLoss's logProb
    int64_t reduction = 1;
    int64_t ignore_index = -100;
    double label_smoothing = 0.0;
    bool has_weight = false;           // given by the caller (not the NLL ops' ones)
    std::vector<int64_t> input_shape;  // the caller's input's, where the ops' differs; else empty

    std::string name() const override { return cross_entropy ? "CrossEntropyBackward" : "NllLossBackward"; }
    void release_variables() override {
        for (SavedVariable* saved : {&input, &target, &weight, &extra}) saved->reset_data();
    }
    variable_list apply(variable_list&& grads) override;
};

variable_list ClassLossBackward::apply(variable_list&& grads) {
    const char* loss = cross_entropy ? "cross_entropy" : "nll_loss";
    refuse_second_derivative(loss);
    TORCH_CHECK(!has_weight || !task_should_compute_output(2), "nnplug.torch: the derivative of ", loss,
                " for 'weight' is not implemented");
    variable_list result(3);
    if (!task_should_compute_output(0)) return result;
    const ClassCall call{input.unpack(), target.unpack(), weight.unpack(),
                         reduction,      ignore_index,    label_smoothing};
    at::Tensor grad = grads[0].defined() ? resolved(grads[0]) : input_metadata(0).zeros_like();
    grad = in_dtype(grad, call.input.scalar_type());
    if (call.reduction == 0) grad = grad.reshape(call.target.sizes());
    at::Tensor out = empty_output(call.input.sizes(), call.input.scalar_type());
    if (cross_entropy) {
        cross_entropy_backward(call, grad, extra.unpack(), out);
        result[0] = input_shape.empty() ? out : rows_to_input_layout(out, input_shape);
    } else {
        nll_backward(call, grad, extra.unpack(), out);
        result[0] = input_shape.empty() ? out : out.reshape(input_shape);  // a reshape: about 0.4 us
    }
    return result;
}

// Makes `out` the result of a ClassLossBackward when input or weight needs a gradient.
void record_history(at::Tensor& out, bool cross_entropy, const ClassCall& call, const at::Tensor& extra,
                    const at::Tensor& input, const at::Tensor& target,
                    const c10::optional<at::Tensor>& weight) {
    if (!torch::autograd::compute_requires_grad(input, weight)) return;
    const std::shared_ptr<ClassLossBackward> node(new ClassLossBackward(), torch::autograd::deleteNode);
    node->set_next_edges(torch::autograd::collect_next_edges(input, target, weight));
    node->cross_entropy = cross_entropy;
    node->input = SavedVariable(call.input, false);
    node->target = SavedVariable(call.target, false);
    node->weight = SavedVariable(call.weight, false);
    node->extra = SavedVariable(extra, false);
    node->reduction = call.reduction;
    node->ignore_index = call.ignore_index;
    node->label_smoothing = call.label_smoothing;
    node->has_weight = weight.has_value() && weight->defined();
    if (input.sizes() != call.input.sizes()) node->input_shape = input.sizes().vec();
    torch::autograd::set_history(out, node);
}

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
    const at::ScalarType dtype = input.scalar_type();
    at::Tensor out =
        call.reduction == 0 ? empty_output(target.sizes(), dtype) : at::empty({}, at::TensorOptions(dtype));
    at::Tensor total_weight = at::empty({}, at::TensorOptions(dtype));  // written unless reduction none
    const bool reshaped = call.reduction == 0 && target.sizes() != call.target.sizes();
    nll_forward(call, reshaped ? out.view(call.target.sizes()) : out, total_weight);
    record_history(out, false, call, total_weight, input_given, target_given, weight_given);
    return out;
}

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
    const at::ScalarType dtype = input.scalar_type();
    at::Tensor loss =
        call.reduction == 0 ? empty_output(target.sizes(), dtype) : at::empty({}, at::TensorOptions(dtype));
    at::Tensor log_prob = empty_output(call.input.sizes(), dtype);
    const bool reshaped = call.reduction == 0 && target.sizes() != call.target.sizes();
    cross_entropy_forward(call, reshaped ? loss.view(call.target.sizes()) : loss, log_prob);
    record_history(loss, true, call, log_prob, input_given, target_given, weight_given);
    return loss;
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
