"""Gradients on the float32 path against central finite differences of nnplug's own
forward (not torch's): the backward ops agree with the forward op they belong to."""

import pytest
import torch

import nnplug.torch as nt


def finite_differences(loss_of, tensor, step):
    """d loss / d tensor[i], by (f(x + h) - f(x - h)) / 2h per element, in float64 sums."""
    grads = torch.empty(tensor.shape, dtype=torch.float64)
    flat = tensor.view(-1)
    for i in range(flat.numel()):
        saved = float(flat[i])
        flat[i] = saved + step
        up = float(loss_of())
        flat[i] = saved - step
        down = float(loss_of())
        flat[i] = saved
        grads.view(-1)[i] = (up - down) / (2 * step)
    return grads


def analytic(function, inputs, index):
    leaf = inputs[index].detach().clone().requires_grad_(True)
    arguments = list(inputs)
    arguments[index] = leaf
    (grad,) = torch.autograd.grad(function(*arguments), [leaf])
    return grad.double()


@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("case", ["bce", "logits_self", "logits_target", "logits_pos_weight_self",
                                  "logits_pos_weight_target", "mse_self", "mse_target"])
def test_gradient_matches_finite_differences(case, reduction):
    g = torch.Generator().manual_seed(2)
    shape = (3, 4)
    weight = torch.rand(4, generator=g) + 0.5
    if case == "bce":
        inputs = [torch.rand(shape, generator=g) * 0.8 + 0.1, torch.rand(shape, generator=g)]

        def function(x, y):
            return nt.binary_cross_entropy(x, y, weight, reduction=reduction)
    elif case.startswith("mse"):  # target broadcast along dim 0: its gradient sums 3 rows
        inputs = [torch.randn(shape, generator=g) * 2, torch.randn(4, generator=g)]

        def function(x, y):
            return nt.mse_loss(x, y, reduction=reduction)
    else:
        pos_weight = torch.rand(4, generator=g) * 3 if "pos_weight" in case else None
        inputs = [torch.randn(shape, generator=g) * 2, torch.rand(shape, generator=g)]

        def function(x, y):
            return nt.binary_cross_entropy_with_logits(x, y, weight, pos_weight, reduction=reduction)
    index = 1 if case.endswith("target") else 0
    expected = finite_differences(lambda: function(*inputs), inputs[index], step=1e-2)
    # float32 forward sums: the differences carry about 1e-7 * |loss| / h of rounding.
    torch.testing.assert_close(analytic(function, inputs, index), expected, rtol=2e-3, atol=2e-4)
