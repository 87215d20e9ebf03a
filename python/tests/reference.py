"""Reference values: torch.nn.functional in float64 on the same (already rounded) values."""

import torch
import torch.nn.functional as F

# Tolerances against the float64 reference: float32 math, then one rounding into the dtype.
TOLERANCE = {
    torch.float32: dict(rtol=2e-5, atol=1e-7),
    torch.float16: dict(rtol=1.5e-3, atol=1e-7),
    torch.bfloat16: dict(rtol=1e-2, atol=1e-12),
}


def float64(t):
    """A float tensor's float64 copy; class indices stay as they are."""
    if t is None or not t.is_floating_point():
        return None if t is None else t.detach()
    return t.detach().double()


def _grads(loss, leaves, grad_output):
    if not leaves:
        return ()
    if grad_output is None:  # autograd then hands the loss a stride-0 expanded (or 0-d) one
        return torch.autograd.grad(loss.sum(), leaves)
    return torch.autograd.grad(loss, leaves, grad_outputs=grad_output.to(loss.dtype))


def loss_and_grads(function, inputs, kwargs, grad_of, grad_output=None):
    """The loss of `function` on float64 copies of `inputs` and its gradients w.r.t. the
    inputs at the indices `grad_of`, for `grad_output` (None: the loss summed first)."""
    copies = [float64(t) for t in inputs]
    for i in grad_of:
        copies[i].requires_grad_(True)
    loss = function(*copies, **kwargs)
    return loss.detach(), _grads(loss, [copies[i] for i in grad_of], grad_output)


def nnplug_loss_and_grads(function, inputs, kwargs, grad_of, grad_output=None):
    """The same through an nnplug.torch function on `inputs` as they are (views included)."""
    if grad_of:
        inputs = list(inputs)
        for i in grad_of:  # a leaf that requires grad, viewed the same way
            base = inputs[i]._base if inputs[i]._base is not None else inputs[i]
            base = base.detach().requires_grad_(True)
            inputs[i] = base.as_strided(inputs[i].shape, inputs[i].stride(), inputs[i].storage_offset())
    loss = function(*inputs, **kwargs)
    return loss.detach(), _grads(loss, [inputs[i] for i in grad_of], grad_output)


def assert_close(actual, expected, dtype):
    assert actual.dtype == dtype, f"dtype {actual.dtype}, expected {dtype}"
    assert actual.shape == expected.shape, f"shape {tuple(actual.shape)}, expected {tuple(expected.shape)}"
    torch.testing.assert_close(actual.double(), expected, equal_nan=True, **TOLERANCE[dtype])


BCE = F.binary_cross_entropy


def BCE_WITH_LOGITS(input, target, weight=None, pos_weight=None, reduction="mean"):
    """torch's, with nnplug.torch's argument order (pos_weight before reduction)."""
    return F.binary_cross_entropy_with_logits(input, target, weight, pos_weight=pos_weight, reduction=reduction)


def MSE(input, target, reduction="mean"):
    """torch's, on operands broadcast first as torch's own mse_loss does (without its warning
    about different sizes)."""
    input, target = torch.broadcast_tensors(input, target)
    return F.mse_loss(input, target, reduction=reduction)


ACL_DTYPES = {torch.float32: 0, torch.float16: 1, torch.bfloat16: 27, torch.int64: 9}


def raw(tensor):
    """A tensor as nnplug._nnplug.run takes it: (data_ptr, acl dtype, shape, strides)."""
    return (tensor.data_ptr(), ACL_DTYPES[tensor.dtype], tuple(tensor.shape), tuple(tensor.stride()))
