// The losses of elementwise aclnn ops as torch operators torch.ops.nnplug.<name>, each a
// LossOps: its forward op, the ops of its gradients, its dtypes and shapes.
#include <ATen/Dispatch.h>
#include <torch/library.h>

#include "aclnnop/aclnn_binary_cross_entropy.h"
#include "aclnnop/aclnn_binary_cross_entropy_backward.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_backward.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_target_backward.h"
#include "aclnnop/aclnn_kl_div.h"
#include "aclnnop/aclnn_kl_div_backward.h"
#include "aclnnop/aclnn_kl_div_target_backward.h"
#include "aclnnop/aclnn_l1_loss.h"
#include "aclnnop/aclnn_l1_loss_backward.h"
#include "aclnnop/aclnn_mse_loss.h"
#include "aclnnop/aclnn_mse_loss_backward.h"
#include "aclnnop/aclnn_smooth_l1_loss.h"
#include "aclnnop/aclnn_smooth_l1_loss_backward.h"
#include "aclnnop/aclnn_soft_margin_loss.h"
#include "aclnnop/aclnn_soft_margin_loss_backward.h"
#include "aten_call.h"
#include "loss_function.h"
#include "losses.h"

namespace nnplug::torch_ops {
namespace {

// An aclnn call whose first phase takes `tensors...`, then `attrs...` (by value), then out.
// The tensors become aclTensors in order; each op below is one line of it.
template <class... Attrs>
void call(const char* name,
          aclnnStatus (*first)(const aclTensor*, const aclTensor*, Attrs..., aclTensor*, uint64_t*,
                               aclOpExecutor**),
          python::RunFn second, const at::Tensor& a, const at::Tensor& b, Attrs... attrs,
          const at::Tensor& out) {
    AclCall acl;
    aclTensor* const& x = acl.in(a);
    aclTensor* const& y = acl.in(b);
    aclTensor* const& result = acl.out(out);
    acl.run(
        name, {attr_bits(attrs)...},
        [&](uint64_t* size, aclOpExecutor** executor) {
            return first(x, y, attrs..., result, size, executor);
        },
        second);
}

template <class... Attrs>
void call(const char* name,
          aclnnStatus (*first)(const aclTensor*, const aclTensor*, const aclTensor*, Attrs..., aclTensor*,
                               uint64_t*, aclOpExecutor**),
          python::RunFn second, const at::Tensor& a, const at::Tensor& b, const at::Tensor& c, Attrs... attrs,
          const at::Tensor& out) {
    AclCall acl;
    aclTensor* const& x = acl.in(a);
    aclTensor* const& y = acl.in(b);
    aclTensor* const& z = acl.in(c);
    aclTensor* const& result = acl.out(out);
    acl.run(
        name, {attr_bits(attrs)...},
        [&](uint64_t* size, aclOpExecutor** executor) {
            return first(x, y, z, attrs..., result, size, executor);
        },
        second);
}

template <class... Attrs>
void call(const char* name,
          aclnnStatus (*first)(const aclTensor*, const aclTensor*, const aclTensor*, const aclTensor*,
                               Attrs..., aclTensor*, uint64_t*, aclOpExecutor**),
          python::RunFn second, const at::Tensor& a, const at::Tensor& b, const at::Tensor& c,
          const at::Tensor& d, Attrs... attrs, const at::Tensor& out) {
    AclCall acl;
    aclTensor* const& x = acl.in(a);
    aclTensor* const& y = acl.in(b);
    aclTensor* const& z = acl.in(c);
    aclTensor* const& w = acl.in(d);
    aclTensor* const& result = acl.out(out);
    acl.run(
        name, {attr_bits(attrs)...},
        [&](uint64_t* size, aclOpExecutor** executor) {
            return first(x, y, z, w, attrs..., result, size, executor);
        },
        second);
}

template <class... Attrs>
void call(const char* name,
          aclnnStatus (*first)(const aclTensor*, const aclTensor*, const aclTensor*, const aclTensor*,
                               const aclTensor*, Attrs..., aclTensor*, uint64_t*, aclOpExecutor**),
          python::RunFn second, const at::Tensor& a, const at::Tensor& b, const at::Tensor& c,
          const at::Tensor& d, const at::Tensor& e, Attrs... attrs, const at::Tensor& out) {
    AclCall acl;
    aclTensor* const& x = acl.in(a);
    aclTensor* const& y = acl.in(b);
    aclTensor* const& z = acl.in(c);
    aclTensor* const& w = acl.in(d);
    aclTensor* const& v = acl.in(e);
    aclTensor* const& result = acl.out(out);
    acl.run(
        name, {attr_bits(attrs)...},
        [&](uint64_t* size, aclOpExecutor** executor) {
            return first(x, y, z, w, v, attrs..., result, size, executor);
        },
        second);
}

// The gradient w.r.t. target of a loss of self - target whose gradient is odd in it: the
// gradient op w.r.t. self with the two swapped.
template <GradientFn of_self>
void swapped(const at::Tensor& grad, const Operands& o, const Attrs& attrs, const at::Tensor& out) {
    of_self(grad, Operands{o[1], o[0], o[2], o[3]}, attrs, out);
}

const LossOps kBinaryCrossEntropy{
    "binary_cross_entropy",
    {"input", "target", "weight", nullptr},
    [](const Operands& o, const Attrs& a, const at::Tensor& out) {
        call<int64_t>("aclnnBinaryCrossEntropy", aclnnBinaryCrossEntropyGetWorkspaceSize,
                      aclnnBinaryCrossEntropy, o[0], o[1], o[2], a.reduction, out);
    },
    {[](const at::Tensor& g, const Operands& o, const Attrs& a, const at::Tensor& out) {
         call<int64_t>("aclnnBinaryCrossEntropyBackward", aclnnBinaryCrossEntropyBackwardGetWorkspaceSize,
                       aclnnBinaryCrossEntropyBackward, g, o[0], o[1], o[2], a.reduction, out);
     },
     nullptr, nullptr, nullptr},
    OutDtype::promoted,
    OutDtype::operand,
    false};

// The with-logits ops write `out` in target's dtype (CANN's rule); results are then cast to
// torch's dtype.
const LossOps kBinaryCrossEntropyWithLogits{
    "binary_cross_entropy_with_logits",
    {"input", "target", "weight", "pos_weight"},
    [](const Operands& o, const Attrs& a, const at::Tensor& out) {
        call<int64_t>("aclnnBinaryCrossEntropyWithLogits", aclnnBinaryCrossEntropyWithLogitsGetWorkspaceSize,
                      aclnnBinaryCrossEntropyWithLogits, o[0], o[1], o[2], o[3], a.reduction, out);
    },
    {[](const at::Tensor& g, const Operands& o, const Attrs& a, const at::Tensor& out) {
         call<int64_t>("aclnnBinaryCrossEntropyWithLogitsBackward",
                       aclnnBinaryCrossEntropyWithLogitsBackwardGetWorkspaceSize,
                       aclnnBinaryCrossEntropyWithLogitsBackward, g, o[0], o[1], o[2], o[3], a.reduction,
                       out);
     },
     [](const at::Tensor& g, const Operands& o, const Attrs& a, const at::Tensor& out) {
         call<int64_t>("aclnnBinaryCrossEntropyWithLogitsTargetBackward",
                       aclnnBinaryCrossEntropyWithLogitsTargetBackwardGetWorkspaceSize,
                       aclnnBinaryCrossEntropyWithLogitsTargetBackward, g, o[0], o[1], o[2], o[3],
                       a.reduction, out);
     },
     nullptr, nullptr},
    OutDtype::target,
    OutDtype::target,
    false};

void mse_backward(const at::Tensor& g, const Operands& o, const Attrs& a, const at::Tensor& out) {
    call<int64_t>("aclnnMseLossBackward", aclnnMseLossBackwardGetWorkspaceSize, aclnnMseLossBackward, g, o[0],
                  o[1], a.reduction, out);
}

const LossOps kMseLoss{"mse_loss",
                       {"input", "target", nullptr, nullptr},
                       [](const Operands& o, const Attrs& a, const at::Tensor& out) {
                           call<int64_t>("aclnnMseLoss", aclnnMseLossGetWorkspaceSize, aclnnMseLoss, o[0],
                                         o[1], a.reduction, out);
                       },
                       {mse_backward, swapped<mse_backward>, nullptr, nullptr},
                       OutDtype::promoted,
                       OutDtype::promoted,
                       true};

void l1_backward(const at::Tensor& g, const Operands& o, const Attrs& a, const at::Tensor& out) {
    call<int64_t>("aclnnL1LossBackward", aclnnL1LossBackwardGetWorkspaceSize, aclnnL1LossBackward, g, o[0],
                  o[1], a.reduction, out);
}

const LossOps kL1Loss{"l1_loss",
                      {"input", "target", nullptr, nullptr},
                      [](const Operands& o, const Attrs& a, const at::Tensor& out) {
                          call<int64_t>("aclnnL1Loss", aclnnL1LossGetWorkspaceSize, aclnnL1Loss, o[0], o[1],
                                        a.reduction, out);
                      },
                      {l1_backward, swapped<l1_backward>, nullptr, nullptr},
                      OutDtype::promoted,
                      OutDtype::promoted,
                      true};

void smooth_l1_forward(const Operands& o, const Attrs& a, const at::Tensor& out) {
    call<int64_t, float>("aclnnSmoothL1Loss", aclnnSmoothL1LossGetWorkspaceSize, aclnnSmoothL1Loss, o[0],
                         o[1], a.reduction, static_cast<float>(a.real), out);
}

void smooth_l1_backward(const at::Tensor& g, const Operands& o, const Attrs& a, const at::Tensor& out) {
    call<int64_t, float>("aclnnSmoothL1LossBackward", aclnnSmoothL1LossBackwardGetWorkspaceSize,
                         aclnnSmoothL1LossBackward, g, o[0], o[1], a.reduction, static_cast<float>(a.real),
                         out);
}

const LossOps kSmoothL1Loss{"smooth_l1_loss",
                            {"input", "target", nullptr, nullptr},
                            smooth_l1_forward,
                            {smooth_l1_backward, swapped<smooth_l1_backward>, nullptr, nullptr},
                            OutDtype::promoted,
                            OutDtype::promoted,
                            true};

// `tensor` times `factor` in place; one element (a reduced loss, its incoming gradient) by
// hand, as an ATen call costs more than the loss's whole op at small sizes.
void scale(at::Tensor& tensor, double factor) {
    if (tensor.numel() != 1) {
        tensor.mul_(factor);
        return;
    }
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, tensor.scalar_type(), "scale", [&] {
        scalar_t* value = tensor.data_ptr<scalar_t>();
        *value = static_cast<scalar_t>(static_cast<double>(*value) * factor);
    });
}

// Huber's loss is delta · smooth_l1 with beta = delta: the SmoothL1 ops, scaled.
void huber_backward(const at::Tensor& g, const Operands& o, const Attrs& a, const at::Tensor& out) {
    if (g.numel() != 1) return smooth_l1_backward(g * a.real, o, a, out);
    at::Tensor scaled = at::empty(g.sizes(), g.options());
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, g.scalar_type(), "huber_backward", [&] {
        *scaled.data_ptr<scalar_t>() =
            static_cast<scalar_t>(static_cast<double>(*g.data_ptr<scalar_t>()) * a.real);
    });
    smooth_l1_backward(scaled, o, a, out);
}

const LossOps kHuberLoss{"huber_loss",
                         {"input", "target", nullptr, nullptr},
                         [](const Operands& o, const Attrs& a, const at::Tensor& out) {
                             smooth_l1_forward(o, a, out);
                             at::Tensor result = out;
                             scale(result, a.real);
                         },
                         {huber_backward, swapped<huber_backward>, nullptr, nullptr},
                         OutDtype::promoted,
                         OutDtype::promoted,
                         true};

const LossOps kSoftMarginLoss{
    "soft_margin_loss",
    {"input", "target", nullptr, nullptr},
    [](const Operands& o, const Attrs& a, const at::Tensor& out) {
        call<int64_t>("aclnnSoftMarginLoss", aclnnSoftMarginLossGetWorkspaceSize, aclnnSoftMarginLoss, o[0],
                      o[1], a.reduction, out);
    },
    {[](const at::Tensor& g, const Operands& o, const Attrs& a, const at::Tensor& out) {
         call<int64_t>("aclnnSoftMarginLossBackward", aclnnSoftMarginLossBackwardGetWorkspaceSize,
                       aclnnSoftMarginLossBackward, g, o[0], o[1], a.reduction, out);
     },
     nullptr, nullptr, nullptr},
    OutDtype::promoted,
    OutDtype::promoted,
    true};

// batchmean's gradients: the sum's, of the incoming gradient over input.size(0) (the
// gradient ops see the broadcast self, whose size(0) may differ).
std::pair<at::Tensor, int64_t> kl_div_incoming(const at::Tensor& g, const Attrs& a) {
    if (a.reduction != 3) return {g, a.reduction};
    return {g / static_cast<double>(a.batch), 2};
}

const LossOps kKlDiv{"kl_div",
                     {"input", "target", nullptr, nullptr},
                     [](const Operands& o, const Attrs& a, const at::Tensor& out) {
                         call<int64_t, bool>("aclnnKlDiv", aclnnKlDivGetWorkspaceSize, aclnnKlDiv, o[0], o[1],
                                             a.reduction, a.flag, out);
                     },
                     {[](const at::Tensor& g, const Operands& o, const Attrs& a, const at::Tensor& out) {
                          const auto [grad, reduction] = kl_div_incoming(g, a);
                          call<int64_t, bool>("aclnnKlDivBackward", aclnnKlDivBackwardGetWorkspaceSize,
                                              aclnnKlDivBackward, grad, o[0], o[1], reduction, a.flag, out);
                      },
                      [](const at::Tensor& g, const Operands& o, const Attrs& a, const at::Tensor& out) {
                          const auto [grad, reduction] = kl_div_incoming(g, a);
                          call<int64_t, bool>(
                              "aclnnKlDivTargetBackward", aclnnKlDivTargetBackwardGetWorkspaceSize,
                              aclnnKlDivTargetBackward, grad, o[0], o[1], reduction, a.flag, out);
                      },
                      nullptr, nullptr},
                     OutDtype::promoted,
                     OutDtype::promoted,
                     true};

at::Tensor two_operand_loss(const LossOps& ops, const at::Tensor& input, const at::Tensor& target,
                            c10::string_view reduction, double real = 0.0, bool flag = false) {
    Attrs attrs{reduction_code(ops.name, reduction, &ops == &kKlDiv), real, flag, 1};
    const Operands operands = checked_operands(ops, input, target, c10::nullopt, c10::nullopt);
    if (attrs.reduction == 3) {
        TORCH_CHECK_VALUE(operands[0].dim() > 0,
                          "nnplug.torch.kl_div: batchmean needs an input of at least one dim");
        attrs.batch = operands[0].size(0);
    }
    return apply_loss(ops, attrs, operands);
}

}  // namespace

at::Tensor binary_cross_entropy(const at::Tensor& input, const at::Tensor& target,
                                const c10::optional<at::Tensor>& weight, c10::string_view reduction) {
    const Attrs attrs{reduction_code(kBinaryCrossEntropy.name, reduction)};
    return apply_loss(kBinaryCrossEntropy, attrs,
                      checked_operands(kBinaryCrossEntropy, input, target, weight, c10::nullopt));
}

at::Tensor binary_cross_entropy_with_logits(const at::Tensor& input, const at::Tensor& target,
                                            const c10::optional<at::Tensor>& weight,
                                            const c10::optional<at::Tensor>& pos_weight,
                                            c10::string_view reduction) {
    const LossOps& ops = kBinaryCrossEntropyWithLogits;
    return apply_loss(ops, Attrs{reduction_code(ops.name, reduction)},
                      checked_operands(ops, input, target, weight, pos_weight));
}

at::Tensor mse_loss(const at::Tensor& input, const at::Tensor& target, c10::string_view reduction) {
    return two_operand_loss(kMseLoss, input, target, reduction);
}

at::Tensor l1_loss(const at::Tensor& input, const at::Tensor& target, c10::string_view reduction) {
    return two_operand_loss(kL1Loss, input, target, reduction);
}

at::Tensor smooth_l1_loss(const at::Tensor& input, const at::Tensor& target, c10::string_view reduction,
                          double beta) {
    return two_operand_loss(kSmoothL1Loss, input, target, reduction, beta);
}

at::Tensor huber_loss(const at::Tensor& input, const at::Tensor& target, c10::string_view reduction,
                      double delta) {
    TORCH_CHECK_VALUE(delta > 0, "nnplug.torch.huber_loss: delta must be positive, not ", delta);
    return two_operand_loss(kHuberLoss, input, target, reduction, delta);
}

at::Tensor soft_margin_loss(const at::Tensor& input, const at::Tensor& target, c10::string_view reduction) {
    return two_operand_loss(kSoftMarginLoss, input, target, reduction);
}

at::Tensor kl_div(const at::Tensor& input, const at::Tensor& target, c10::string_view reduction,
                  bool log_target) {
    return two_operand_loss(kKlDiv, input, target, reduction, 0.0, log_target);
}

}  // namespace nnplug::torch_ops

TORCH_LIBRARY_FRAGMENT(nnplug, m) {
    using namespace nnplug::torch_ops;
    m.def(
        "binary_cross_entropy(Tensor input, Tensor target, Tensor? weight=None, str reduction='mean') -> "
        "Tensor",
        &binary_cross_entropy);
    m.def(
        "binary_cross_entropy_with_logits(Tensor input, Tensor target, Tensor? weight=None, "
        "Tensor? pos_weight=None, str reduction='mean') -> Tensor",
        &binary_cross_entropy_with_logits);
    m.def("mse_loss(Tensor input, Tensor target, str reduction='mean') -> Tensor", &mse_loss);
    m.def("l1_loss(Tensor input, Tensor target, str reduction='mean') -> Tensor", &l1_loss);
    m.def("smooth_l1_loss(Tensor input, Tensor target, str reduction='mean', float beta=1.0) -> Tensor",
          &smooth_l1_loss);
    m.def("huber_loss(Tensor input, Tensor target, str reduction='mean', float delta=1.0) -> Tensor",
          &huber_loss);
    m.def("soft_margin_loss(Tensor input, Tensor target, str reduction='mean') -> Tensor", &soft_margin_loss);
    m.def("kl_div(Tensor input, Tensor target, str reduction='mean', bool log_target=False) -> Tensor",
          &kl_div);
}
