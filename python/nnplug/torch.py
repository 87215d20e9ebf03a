"""nnplug's losses as torch operators, functions and modules.

Each loss is a torch operator, torch.ops.nnplug.<name>, whose C++ kernel runs the forward and
every gradient as aclnn ops on the backend nnplug.init chose, with its autograd in C++: a call
runs no Python beyond the function that names it, and the modules work inside
torch.jit.script. Tensors are strided CPU tensors of float32, float16 or bfloat16 (class
indices: int64), passed by address with their shape and strides (views are read in place
where the backend's memory is host memory).
"""

import torch

import nnplug  # noqa: F401  (nnplug._nnplug first: the operators read its runtime state)
from . import _nnplug_torch  # registers torch.ops.nnplug.*

__all__ = ["binary_cross_entropy", "binary_cross_entropy_with_logits", "mse_loss", "l1_loss", "smooth_l1_loss",
           "huber_loss", "soft_margin_loss", "kl_div", "nll_loss", "cross_entropy", "BCELoss", "BCEWithLogitsLoss",
           "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "SoftMarginLoss", "KLDivLoss", "NLLLoss",
           "CrossEntropyLoss"]

_ops = torch.ops.nnplug
_REDUCTIONS = ("none", "mean", "sum")


# The functions call the operators' kernels through their direct bindings (an operator's
# call from Python boxes its arguments: about 2 us); the modules' scripts call the operators.
_BCE, _BCE_WITH_LOGITS, _MSE, _L1, _SMOOTH_L1, _HUBER, _SOFT_MARGIN, _KL_DIV, _NLL, _CROSS_ENTROPY = (
    getattr(_nnplug_torch, name) for name in ("binary_cross_entropy", "binary_cross_entropy_with_logits", "mse_loss",
                                              "l1_loss", "smooth_l1_loss", "huber_loss", "soft_margin_loss", "kl_div",
                                              "nll_loss", "cross_entropy"))


def _not_tensors(loss, names, values):
    """The TypeError for an operand that is not a tensor (the operator would say RuntimeError);
    input and target (the first two) are required."""
    for i, (name, value) in enumerate(zip(names, values)):
        if (i < 2 or value is not None) and not isinstance(value, torch.Tensor):
            return TypeError(f"nnplug.torch.{loss}: {name} must be a torch.Tensor, not {type(value).__name__}")
    return TypeError(f"nnplug.torch.{loss}: operands must be torch.Tensors")


def _checked_reduction(loss, reduction, words=_REDUCTIONS):
    if reduction not in words:
        allowed = ", ".join(repr(w) for w in words[:-1]) + f" or {words[-1]!r}"
        raise ValueError(f"nnplug.torch.{loss}: reduction must be {allowed}, not {reduction!r}")
    return reduction


# Each function checks its operands are tensors inline (a helper call would cost more than
# the check), then calls its kernel.
_T = torch.Tensor
# An operand with a __torch_function__ override (a subclass, a lazy module's uninitialized
# parameter) goes through the operator, which honours torch's protocol; the direct bindings
# do not.
_overridden = torch._C._has_torch_function_variadic
_PAIR = ("input", "target")
_WEIGHTED = ("input", "target", "weight")
_WEIGHTED_TWICE = ("input", "target", "weight", "pos_weight")


def binary_cross_entropy(input, target, weight=None, reduction="mean"):
    """torch.nn.functional.binary_cross_entropy on nnplug (aclnnBinaryCrossEntropy)."""
    if not (isinstance(input, _T) and isinstance(target, _T) and (weight is None or isinstance(weight, _T))):
        raise _not_tensors("binary_cross_entropy", _WEIGHTED, (input, target, weight))
    if _overridden(input, target, weight):
        return _ops.binary_cross_entropy(input, target, weight, reduction)
    return _BCE(input, target, weight, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction="mean"):
    """torch.nn.functional.binary_cross_entropy_with_logits on nnplug
    (aclnnBinaryCrossEntropyWithLogits)."""
    if not (isinstance(input, _T) and isinstance(target, _T) and (weight is None or isinstance(weight, _T))
            and (pos_weight is None or isinstance(pos_weight, _T))):
        raise _not_tensors("binary_cross_entropy_with_logits", _WEIGHTED_TWICE, (input, target, weight, pos_weight))
    if _overridden(input, target, weight, pos_weight):
        return _ops.binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction)
    return _BCE_WITH_LOGITS(input, target, weight, pos_weight, reduction)


def mse_loss(input, target, reduction="mean"):
    """torch.nn.functional.mse_loss on nnplug (aclnnMseLoss): input and target broadcast to
    each other, as in torch, and the mean divides by the broadcast count."""
    if not (isinstance(input, _T) and isinstance(target, _T)):
        raise _not_tensors("mse_loss", _PAIR, (input, target))
    if _overridden(input, target):
        return _ops.mse_loss(input, target, reduction)
    return _MSE(input, target, reduction)


def l1_loss(input, target, reduction="mean"):
    """torch.nn.functional.l1_loss on nnplug (aclnnL1Loss)."""
    if not (isinstance(input, _T) and isinstance(target, _T)):
        raise _not_tensors("l1_loss", _PAIR, (input, target))
    if _overridden(input, target):
        return _ops.l1_loss(input, target, reduction)
    return _L1(input, target, reduction)


def smooth_l1_loss(input, target, reduction="mean", beta=1.0):
    """torch.nn.functional.smooth_l1_loss on nnplug (aclnnSmoothL1Loss)."""
    if not (isinstance(input, _T) and isinstance(target, _T)):
        raise _not_tensors("smooth_l1_loss", _PAIR, (input, target))
    if _overridden(input, target):
        return _ops.smooth_l1_loss(input, target, reduction, beta)
    return _SMOOTH_L1(input, target, reduction, beta)


def huber_loss(input, target, reduction="mean", delta=1.0):
    """torch.nn.functional.huber_loss on nnplug: delta · aclnnSmoothL1Loss with beta = delta."""
    if not (isinstance(input, _T) and isinstance(target, _T)):
        raise _not_tensors("huber_loss", _PAIR, (input, target))
    if _overridden(input, target):
        return _ops.huber_loss(input, target, reduction, delta)
    return _HUBER(input, target, reduction, delta)


def soft_margin_loss(input, target, reduction="mean"):
    """torch.nn.functional.soft_margin_loss on nnplug (aclnnSoftMarginLoss)."""
    if not (isinstance(input, _T) and isinstance(target, _T)):
        raise _not_tensors("soft_margin_loss", _PAIR, (input, target))
    if _overridden(input, target):
        return _ops.soft_margin_loss(input, target, reduction)
    return _SOFT_MARGIN(input, target, reduction)


def kl_div(input, target, reduction="mean", log_target=False):
    """torch.nn.functional.kl_div on nnplug (aclnnKlDiv; "batchmean" divides the sum by
    input.size(0)); differentiable w.r.t. target too (aclnnKlDivTargetBackward)."""
    if not (isinstance(input, _T) and isinstance(target, _T)):
        raise _not_tensors("kl_div", _PAIR, (input, target))
    if _overridden(input, target):
        return _ops.kl_div(input, target, reduction, log_target)
    return _KL_DIV(input, target, reduction, log_target)


def nll_loss(input, target, weight=None, ignore_index=-100, reduction="mean"):
    """torch.nn.functional.nll_loss on nnplug (aclnnNLLLoss; aclnnNLLLoss2d for inputs of
    more than two dims)."""
    if not (isinstance(input, _T) and isinstance(target, _T) and (weight is None or isinstance(weight, _T))):
        raise _not_tensors("nll_loss", _WEIGHTED, (input, target, weight))
    if _overridden(input, target, weight):
        return _ops.nll_loss(input, target, weight, reduction, ignore_index)
    return _NLL(input, target, weight, reduction, ignore_index)


def cross_entropy(input, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    """torch.nn.functional.cross_entropy on nnplug (aclnnCrossEntropyLoss) with class-index
    targets."""
    if not (isinstance(input, _T) and isinstance(target, _T) and (weight is None or isinstance(weight, _T))):
        raise _not_tensors("cross_entropy", _WEIGHTED, (input, target, weight))
    if _overridden(input, target, weight):
        return _ops.cross_entropy(input, target, weight, reduction, ignore_index, label_smoothing)
    return _CROSS_ENTROPY(input, target, weight, reduction, ignore_index, label_smoothing)


class _Loss(torch.nn.Module):
    """A loss module: its reduction checked when it is made, as torch's modules do."""

    def __init__(self, reduction, words=_REDUCTIONS):
        super().__init__()
        self.reduction = _checked_reduction(type(self).__name__, reduction, words)


class BCELoss(_Loss):
    """torch.nn.BCELoss on nnplug."""

    def __init__(self, weight=None, reduction="mean"):
        super().__init__(reduction)
        self.register_buffer("weight", weight)

    def forward(self, input, target):
        if not torch.jit.is_scripting():  # the function's checks; a script calls the operator
            return binary_cross_entropy(input, target, self.weight, self.reduction)
        return _ops.binary_cross_entropy(input, target, self.weight, self.reduction)


class BCEWithLogitsLoss(_Loss):
    """torch.nn.BCEWithLogitsLoss on nnplug."""

    def __init__(self, weight=None, reduction="mean", pos_weight=None):
        super().__init__(reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        if not torch.jit.is_scripting():  # the function's checks; a script calls the operator
            return binary_cross_entropy_with_logits(input, target, self.weight, self.pos_weight, self.reduction)
        return _ops.binary_cross_entropy_with_logits(input, target, self.weight, self.pos_weight, self.reduction)


class MSELoss(_Loss):
    """torch.nn.MSELoss on nnplug."""

    def __init__(self, reduction="mean"):
        super().__init__(reduction)

    def forward(self, input, target):
        if not torch.jit.is_scripting():  # the function's checks; a script calls the operator
            return mse_loss(input, target, self.reduction)
        return _ops.mse_loss(input, target, self.reduction)


class L1Loss(_Loss):
    """torch.nn.L1Loss on nnplug."""

    def __init__(self, reduction="mean"):
        super().__init__(reduction)

    def forward(self, input, target):
        if not torch.jit.is_scripting():  # the function's checks; a script calls the operator
            return l1_loss(input, target, self.reduction)
        return _ops.l1_loss(input, target, self.reduction)


class SmoothL1Loss(_Loss):
    """torch.nn.SmoothL1Loss on nnplug."""

    def __init__(self, reduction="mean", beta=1.0):
        super().__init__(reduction)
        self.beta = float(beta)

    def forward(self, input, target):
        if not torch.jit.is_scripting():  # the function's checks; a script calls the operator
            return smooth_l1_loss(input, target, self.reduction, self.beta)
        return _ops.smooth_l1_loss(input, target, self.reduction, self.beta)


class HuberLoss(_Loss):
    """torch.nn.HuberLoss on nnplug."""

    def __init__(self, reduction="mean", delta=1.0):
        super().__init__(reduction)
        self.delta = float(delta)

    def forward(self, input, target):
        if not torch.jit.is_scripting():  # the function's checks; a script calls the operator
            return huber_loss(input, target, self.reduction, self.delta)
        return _ops.huber_loss(input, target, self.reduction, self.delta)


class SoftMarginLoss(_Loss):
    """torch.nn.SoftMarginLoss on nnplug."""

    def __init__(self, reduction="mean"):
        super().__init__(reduction)

    def forward(self, input, target):
        if not torch.jit.is_scripting():  # the function's checks; a script calls the operator
            return soft_margin_loss(input, target, self.reduction)
        return _ops.soft_margin_loss(input, target, self.reduction)


class KLDivLoss(_Loss):
    """torch.nn.KLDivLoss on nnplug."""

    def __init__(self, reduction="mean", log_target=False):
        super().__init__(reduction, _REDUCTIONS + ("batchmean",))
        self.log_target = bool(log_target)

    def forward(self, input, target):
        if not torch.jit.is_scripting():  # the function's checks; a script calls the operator
            return kl_div(input, target, self.reduction, self.log_target)
        return _ops.kl_div(input, target, self.reduction, self.log_target)


class NLLLoss(_Loss):
    """torch.nn.NLLLoss on nnplug."""

    def __init__(self, weight=None, ignore_index=-100, reduction="mean"):
        super().__init__(reduction)
        self.register_buffer("weight", weight)
        self.ignore_index = int(ignore_index)

    def forward(self, input, target):
        if not torch.jit.is_scripting():  # the function's checks; a script calls the operator
            return nll_loss(input, target, self.weight, self.ignore_index, self.reduction)
        return _ops.nll_loss(input, target, self.weight, self.reduction, self.ignore_index)


class CrossEntropyLoss(_Loss):
    """torch.nn.CrossEntropyLoss on nnplug (class-index targets)."""

    def __init__(self, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
        super().__init__(reduction)
        self.register_buffer("weight", weight)
        self.ignore_index = int(ignore_index)
        self.label_smoothing = float(label_smoothing)

    def forward(self, input, target):
        if not torch.jit.is_scripting():  # the function's checks; a script calls the operator
            return cross_entropy(input, target, self.weight, self.ignore_index, self.reduction, self.label_smoothing)
        return _ops.cross_entropy(input, target, self.weight, self.reduction, self.ignore_index,
                                  self.label_smoothing)
