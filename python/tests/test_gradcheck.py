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


def _probabilities(g, shape):
    return torch.rand(shape, generator=g) * 0.8 + 0.1


# The other losses: name -> (operands(g), function of the operands, the operand differentiated).
# Values keep clear of each loss's kinks (|x - y| near 0 or beta) so that x ± h stays on one
# branch.
OTHER_CASES = {
    "l1_self": (lambda g: [torch.randn(3, 4, generator=g) * 2, torch.randn(4, generator=g) * 2 + 5],
                lambda r: (lambda x, y: nt.l1_loss(x, y, reduction=r)), 0),
    "l1_target": (lambda g: [torch.randn(3, 4, generator=g) * 2, torch.randn(3, 4, generator=g) * 2 + 5],
                  lambda r: (lambda x, y: nt.l1_loss(x, y, reduction=r)), 1),
    "smooth_l1_self": (lambda g: [torch.randn(3, 4, generator=g), torch.randn(3, 4, generator=g) * 0.1],
                       lambda r: (lambda x, y: nt.smooth_l1_loss(x, y, reduction=r, beta=4.0)), 0),
    "huber_target": (lambda g: [torch.randn(3, 4, generator=g), torch.randn(4, generator=g) * 0.1 + 6],
                     lambda r: (lambda x, y: nt.huber_loss(x, y, reduction=r, delta=0.5)), 1),
    "soft_margin_self": (lambda g: [torch.randn(3, 4, generator=g),
                                    torch.randint(0, 2, (3, 4), generator=g) * 2.0 - 1],
                         lambda r: (lambda x, y: nt.soft_margin_loss(x, y, reduction=r)), 0),
    "kl_div_self": (lambda g: [_probabilities(g, (3, 4)).log(), _probabilities(g, (3, 4))],
                    lambda r: (lambda x, y: nt.kl_div(x, y, reduction=r)), 0),
    "kl_div_target": (lambda g: [_probabilities(g, (3, 4)).log(), _probabilities(g, (3, 4))],
                      lambda r: (lambda x, y: nt.kl_div(x, y, reduction=r)), 1),
    "kl_div_log_target": (lambda g: [_probabilities(g, (3, 4)).log(), _probabilities(g, (3, 4)).log()],
                          lambda r: (lambda x, y: nt.kl_div(x, y, reduction=r, log_target=True)), 1),
    "nll_self": (lambda g: [torch.randn(4, 5, generator=g).log_softmax(1), torch.tensor([0, 4, -100, 2])],
                 lambda r: (lambda x, t: nt.nll_loss(x, t, weight=torch.tensor([1.0, 2.0, 0.5, 1.5, 1.0]),
                                                     reduction=r)), 0),
    "cross_entropy_self": (lambda g: [torch.randn(4, 5, generator=g) * 2, torch.tensor([0, 4, -100, 2])],
                           lambda r: (lambda x, t: nt.cross_entropy(
                               x, t, weight=torch.tensor([1.0, 2.0, 0.5, 1.5, 1.0]), reduction=r,
                               label_smoothing=0.1)), 0),
    "cross_entropy_nd_self": (lambda g: [torch.randn(2, 3, 2, generator=g) * 2, torch.tensor([[0, 2], [1, 1]])],
                              lambda r: (lambda x, t: nt.cross_entropy(x, t, reduction=r)), 0),
}


@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("case", sorted(OTHER_CASES))
def test_other_losses_gradients_match_finite_differences(case, reduction):
    make, function_of, index = OTHER_CASES[case]
    inputs = make(torch.Generator().manual_seed(5))
    function = function_of(reduction)
    expected = finite_differences(lambda: function(*inputs), inputs[index], step=1e-2)
    torch.testing.assert_close(analytic(function, inputs, index), expected, rtol=2e-3, atol=2e-4)
