"""nnplug's losses as torch autograd functions and modules.

The forward and every gradient run as aclnn ops on the backend nnplug.init chose. Tensors
are CPU tensors of float32, float16 or bfloat16, passed by address with their shape and
strides (views are read in place where the backend's memory is host memory).
"""

import dataclasses
import functools
from typing import Callable, Dict, Optional, Tuple

import torch

import nnplug
from . import _nnplug

__all__ = ["binary_cross_entropy", "binary_cross_entropy_with_logits", "mse_loss", "BCELoss", "BCEWithLogitsLoss",
           "MSELoss"]

_ACL_DTYPES = {torch.float32: 0, torch.float16: 1, torch.bfloat16: 27}
_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _describe(tensor, name):
    """(data_ptr, acl dtype, shape, strides) of a tensor the ops can read, else TypeError."""
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"nnplug.torch: {name} must be a torch.Tensor, not {type(tensor).__name__}")
    if tensor.device.type != "cpu" or tensor.layout != torch.strided:
        raise TypeError(f"nnplug.torch: {name} is a {tensor.device.type} {tensor.layout} tensor; "
                        "nnplug takes strided CPU tensors")
    acl_dtype = _ACL_DTYPES.get(tensor.dtype)
    if acl_dtype is None:
        raise TypeError(f"nnplug.torch: {name} has dtype {tensor.dtype}; nnplug takes "
                        "torch.float32, torch.float16 and torch.bfloat16")
    if _view_flags(tensor):
        raise TypeError(f"nnplug.torch: {name} has torch's negative or conjugate bit set; "
                        "resolve it first (resolve_neg(), resolve_conj())")
    return (tensor.data_ptr(), acl_dtype, tuple(tensor.shape), tuple(tensor.stride()))


def _view_flags(tensor):
    """Whether torch reads tensor's memory through a lazy negation or conjugation (e.g.
    c.conj().imag): its bytes are not its values."""
    return (hasattr(tensor, "is_neg") and tensor.is_neg()) or tensor.is_conj()


def _resolved(tensor):
    """An input as the values torch sees: with its negative and conjugate bits applied, as
    torch's own kernels do, instead of its raw memory."""
    if tensor is None or not isinstance(tensor, torch.Tensor) or not _view_flags(tensor):
        return tensor
    return tensor.resolve_conj().resolve_neg()


def _run(op, names, inputs, reduction, out):
    nnplug.ensure_initialized()
    inputs = [_resolved(t) for t in inputs]  # kept alive until the call returns
    described = [None if t is None else _describe(t, n) for n, t in zip(names, inputs)]
    _nnplug.run(op, described, reduction, _describe(out, "out"))
    return out


@dataclasses.dataclass(frozen=True)
class _LossOps:
    """One loss as aclnn ops: a forward op over `operands` (in the op's order, then
    reduction, out) and, per operand that has one, the op of its gradient (called with the
    incoming gradient first, then the operands)."""

    operands: Tuple[str, ...]
    forward: str
    gradients: Dict[int, str]
    # dtype of the forward op's `out`, and of gradient i's `out`, from the operands
    out_dtype: Callable
    grad_dtype: Callable
    # shape of the unreduced loss and of every gradient op's `out` (a gradient is then summed
    # to its operand's shape where that broadcast)
    shape: Callable = lambda operands: operands[0].shape
    # the operands as the gradient ops take them (None: as they are)
    gradient_inputs: Optional[Callable] = None
    # per gradient, the operands its op takes after the incoming gradient, as indices into
    # `operands` (absent: all of them, in order)
    gradient_operands: Dict[int, Tuple[int, ...]] = dataclasses.field(default_factory=dict)


def _promoted(operands):
    return torch.promote_types(operands[0].dtype, operands[1].dtype)


_BCE = _LossOps(
    operands=("input", "target", "weight"),
    forward="aclnnBinaryCrossEntropy",
    gradients={0: "aclnnBinaryCrossEntropyBackward"},
    out_dtype=_promoted,
    grad_dtype=lambda operands, i: operands[i].dtype)

# The with-logits ops write `out` in target's dtype (CANN's rule); results are then cast
# to torch's dtype.
_BCE_WITH_LOGITS = _LossOps(
    operands=("input", "target", "weight", "pos_weight"),
    forward="aclnnBinaryCrossEntropyWithLogits",
    gradients={0: "aclnnBinaryCrossEntropyWithLogitsBackward",
               1: "aclnnBinaryCrossEntropyWithLogitsTargetBackward"},
    out_dtype=lambda operands: operands[1].dtype,
    grad_dtype=lambda operands, i: operands[1].dtype)


def _broadcast_shape(operands):
    return torch.broadcast_shapes(operands[0].shape, operands[1].shape)


def _expanded_and_promoted(operands):
    """The operands as views of their common shape in their promoted dtype: the backward op
    promotes nothing, and its mean divides by self's count, which torch takes after
    broadcasting (its mse_loss calls aten on the expanded tensors)."""
    dtype = _promoted(operands)
    return torch.broadcast_tensors(*(operand.to(dtype) for operand in operands))


# aclnnMseLoss broadcasts and promotes its operands itself. The gradient w.r.t. target is
# the backward op with self and target swapped: 2 * (target - self) * g is exactly the
# negated gradient w.r.t. self.
_MSE = _LossOps(
    operands=("input", "target"),
    forward="aclnnMseLoss",
    gradients={0: "aclnnMseLossBackward", 1: "aclnnMseLossBackward"},
    out_dtype=_promoted,
    grad_dtype=lambda operands, i: _promoted(operands),
    shape=_broadcast_shape,
    gradient_inputs=_expanded_and_promoted,
    gradient_operands={1: (1, 0)})


def _first_derivatives_only(backward):
    """backward refusing to be part of a graph of second derivatives. With create_graph=True
    (a gradient penalty, say) torch runs backward with grad mode on; the gradient ops are not
    differentiable, and once_differentiable alone leaves a gradient whose own gradient is
    silently zero when the incoming gradient needs none."""

    @functools.wraps(backward)
    def checked(ctx, *grad_outputs):
        if torch.is_grad_enabled():
            raise RuntimeError(f"nnplug.torch: {ctx.ops.forward} has no second derivatives: its gradient "
                               "ops are not differentiable (create_graph=True, e.g. a gradient penalty, is "
                               "not supported)")
        return backward(ctx, *grad_outputs)

    return checked


class _AclnnLoss(torch.autograd.Function):
    """A loss whose forward and gradients are the aclnn ops of a _LossOps."""

    @staticmethod
    def forward(ctx, ops, reduction, *operands):
        operands = tuple(_resolved(operand) for operand in operands)
        for name, operand in zip(ops.operands, operands):
            if operand is not None:
                _describe(operand, name)  # TypeError before anything is allocated
        ctx.ops, ctx.reduction = ops, reduction
        ctx.save_for_backward(*operands)
        if reduction == 0:
            out = torch.empty(ops.shape(operands), dtype=ops.out_dtype(operands))
        else:  # the value of an empty reduction, as torch gives it, where an op writes nothing
            out = torch.full((), float("nan") if reduction == 1 else 0.0, dtype=ops.out_dtype(operands))
        _run(ops.forward, ops.operands, operands, reduction, out)
        return out.to(_promoted(operands))

    @staticmethod
    @_first_derivatives_only
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_output):
        ops, operands = ctx.ops, ctx.saved_tensors
        inputs = ops.gradient_inputs(operands) if ops.gradient_inputs else operands
        grads = []
        for i, needed in enumerate(ctx.needs_input_grad[2:]):
            if not needed:
                grads.append(None)
                continue
            if i not in ops.gradients:
                raise RuntimeError(f"nnplug.torch: the derivative of {ops.forward} for "
                                   f"'{ops.operands[i]}' is not implemented")
            out = torch.empty(ops.shape(operands), dtype=ops.grad_dtype(operands, i))
            order = ops.gradient_operands.get(i, range(len(operands)))
            _run(ops.gradients[i], ("grad_output",) + tuple(ops.operands[j] for j in order),
                 (grad_output,) + tuple(inputs[j] for j in order), ctx.reduction, out)
            grads.append(out.sum_to_size(operands[i].shape).to(operands[i].dtype))
        return (None, None, *grads)


def _reduction_code(reduction):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"nnplug.torch: reduction must be 'none', 'mean' or 'sum', not {reduction!r}")
    return _REDUCTIONS[reduction]


def binary_cross_entropy(input, target, weight=None, reduction="mean"):
    """torch.nn.functional.binary_cross_entropy on nnplug (aclnnBinaryCrossEntropy)."""
    return _AclnnLoss.apply(_BCE, _reduction_code(reduction), input, target, weight)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction="mean"):
    """torch.nn.functional.binary_cross_entropy_with_logits on nnplug
    (aclnnBinaryCrossEntropyWithLogits)."""
    return _AclnnLoss.apply(_BCE_WITH_LOGITS, _reduction_code(reduction), input, target, weight, pos_weight)


def mse_loss(input, target, reduction="mean"):
    """torch.nn.functional.mse_loss on nnplug (aclnnMseLoss): input and target broadcast to
    each other, as in torch, and the mean divides by the broadcast count."""
    return _AclnnLoss.apply(_MSE, _reduction_code(reduction), input, target)


class BCELoss(torch.nn.Module):
    """torch.nn.BCELoss on nnplug."""

    def __init__(self, weight=None, reduction="mean"):
        super().__init__()
        _reduction_code(reduction)
        self.register_buffer("weight", weight)
        self.reduction = reduction

    def forward(self, input, target):
        return binary_cross_entropy(input, target, self.weight, self.reduction)


class BCEWithLogitsLoss(torch.nn.Module):
    """torch.nn.BCEWithLogitsLoss on nnplug."""

    def __init__(self, weight=None, reduction="mean", pos_weight=None):
        super().__init__()
        _reduction_code(reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)
        self.reduction = reduction

    def forward(self, input, target):
        return binary_cross_entropy_with_logits(input, target, self.weight, self.pos_weight, self.reduction)


class MSELoss(torch.nn.Module):
    """torch.nn.MSELoss on nnplug."""

    def __init__(self, reduction="mean"):
        super().__init__()
        _reduction_code(reduction)
        self.reduction = reduction

    def forward(self, input, target):
        return mse_loss(input, target, self.reduction)
