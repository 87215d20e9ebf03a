"""nnplug.torch's losses and gradients against torch.nn.functional in float64: random
shapes, broadcast weights, operands that broadcast to each other, strided views, 0-d and
empty tensors, every dtype and reduction."""

import pytest
import torch

import nnplug.torch as nt
from reference import (BCE, BCE_WITH_LOGITS, MSE, TOLERANCE, assert_close, loss_and_grads,
                       nnplug_loss_and_grads)

DTYPES = [torch.float32, torch.float16, torch.bfloat16]
REDUCTIONS = ["none", "mean", "sum"]


def probabilities(shape, dtype, generator):
    return (torch.rand(shape, generator=generator, dtype=torch.float64) * 0.96 + 0.02).to(dtype)


def logits(shape, dtype, generator):
    return (torch.randn(shape, generator=generator, dtype=torch.float64) * 3).to(dtype)


def random_shape(generator):
    rank = int(torch.randint(0, 5, (1,), generator=generator))
    return tuple(int(d) for d in torch.randint(1, 7, (rank,), generator=generator))


def check(nnplug_function, torch_function, inputs, kwargs, grad_of, dtype, grad_output=None):
    expected, expected_grads = loss_and_grads(torch_function, inputs, kwargs, grad_of, grad_output)
    actual, actual_grads = nnplug_loss_and_grads(nnplug_function, inputs, kwargs, grad_of, grad_output)
    assert_close(actual, expected, dtype)
    for i, actual_grad, expected_grad in zip(grad_of, actual_grads, expected_grads):
        assert_close(actual_grad, expected_grad, inputs[i].dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("seed", range(4))
def test_bce_random_shapes(dtype, reduction, seed):
    g = torch.Generator().manual_seed(seed)
    shape = random_shape(g)
    x, y = probabilities(shape, dtype, g), probabilities(shape, dtype, g)
    weight = probabilities(shape[1:], dtype, g) if seed % 2 else None  # broadcast over dim 0
    check(nt.binary_cross_entropy, BCE, [x, y, weight], dict(reduction=reduction), [0], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("seed", range(4))
def test_bce_with_logits_random_shapes(dtype, reduction, seed):
    g = torch.Generator().manual_seed(100 + seed)
    shape = random_shape(g) + (3,)
    x, y = logits(shape, dtype, g), probabilities(shape, dtype, g)
    weight = probabilities(shape[-2:], dtype, g) if seed % 2 else None
    pos_weight = probabilities(shape[-1:], dtype, g) * 3 if seed >= 2 else None
    check(nt.binary_cross_entropy_with_logits, BCE_WITH_LOGITS, [x, y, weight, pos_weight],
          dict(reduction=reduction), [0, 1], dtype)


# input and target broadcast to each other: the loss has the common shape, its mean
# divides by that shape's count, and each gradient is summed back to its operand's shape.
# A summed gradient adds elements each rounded to the dtype, as torch's own does: it is
# held to the dtype's tolerance of the sum of their magnitudes, not of the (cancelling) sum.
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shapes", [((4, 5), (4, 5)), ((3, 1, 5), (4, 1)), ((5,), (2, 3, 5)), ((), (2, 3)),
                                    ((2, 1), ())])
def test_mse_broadcasts_mutually(dtype, reduction, shapes):
    g = torch.Generator().manual_seed(len(shapes[0]) * 10 + len(shapes[1]))
    x, y = logits(shapes[0], dtype, g), logits(shapes[1], dtype, g)
    kwargs = dict(reduction=reduction)
    expected, expected_grads = loss_and_grads(MSE, [x, y], kwargs, [0, 1])
    actual, actual_grads = nnplug_loss_and_grads(nt.mse_loss, [x, y], kwargs, [0, 1])
    assert_close(actual, expected, dtype)
    xb, yb = torch.broadcast_tensors(x.double(), y.double())
    magnitude = (2 * (xb - yb)).abs() / (xb.numel() if reduction == "mean" else 1)
    for operand, actual_grad, expected_grad in zip((x, y), actual_grads, expected_grads):
        assert actual_grad.dtype == dtype and actual_grad.shape == operand.shape
        bound = TOLERANCE[dtype]["rtol"] * (magnitude.sum_to_size(operand.shape) + expected_grad.abs()) + 1e-12
        assert ((actual_grad.double() - expected_grad).abs() <= bound).all(), (actual_grad, expected_grad)


@pytest.mark.parametrize("dtype", DTYPES)
def test_incoming_gradient_scales_each_element(dtype):
    g = torch.Generator().manual_seed(7)
    x, y = probabilities((5, 6), dtype, g), probabilities((5, 6), dtype, g)
    grad_output = torch.randn((5, 6), generator=g, dtype=torch.float64)
    check(nt.binary_cross_entropy, BCE, [x, y, None], dict(reduction="none"), [0], dtype, grad_output)
    z = logits((5, 6), dtype, g)
    check(nt.binary_cross_entropy_with_logits, BCE_WITH_LOGITS, [z, y, None, None], dict(reduction="none"),
          [0, 1], dtype, grad_output)
    check(nt.binary_cross_entropy_with_logits, BCE_WITH_LOGITS, [z, y, None, None], dict(reduction="mean"),
          [0, 1], dtype, torch.tensor(-2.5, dtype=torch.float64))


def strided_views(dtype, g):
    """Views torch hands out without copying: each with its strides and storage offset."""
    base = probabilities((9, 14), dtype, g)
    return {
        "transposed": base[:6, :5].t(),
        "stepped": base[1::2, 3::3],
        "offset_row": base[4],
        "expanded": base[2, :5].expand(4, 5),  # stride 0
        "scalar_in_storage": base[3, 7],  # 0-d at an offset
    }


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("view", ["transposed", "stepped", "offset_row", "expanded", "scalar_in_storage"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_strided_views_are_read_in_place(dtype, view, reduction):
    g = torch.Generator().manual_seed(11)
    x = strided_views(dtype, g)[view]
    y = probabilities(x.shape, dtype, g)
    y = y.t().contiguous().t() if y.dim() == 2 else y  # another layout than x's
    check(nt.binary_cross_entropy, BCE, [x, y, None], dict(reduction=reduction), [0], dtype)
    z = (x - 0.5) * 8
    check(nt.binary_cross_entropy_with_logits, BCE_WITH_LOGITS, [z, x, None, None], dict(reduction=reduction),
          [0, 1], dtype)
    check(nt.mse_loss, MSE, [z, y], dict(reduction=reduction), [0, 1], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_zero_dim_tensors(dtype, reduction):
    x, y = torch.tensor(0.3, dtype=dtype), torch.tensor(0.8, dtype=dtype)
    check(nt.binary_cross_entropy, BCE, [x, y, torch.tensor(2.0, dtype=dtype)], dict(reduction=reduction), [0],
          dtype)
    check(nt.binary_cross_entropy_with_logits, BCE_WITH_LOGITS, [x * 5, y, None, torch.tensor(3.0, dtype=dtype)],
          dict(reduction=reduction), [0, 1], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_empty_tensors(dtype, reduction):
    x, y = torch.rand(0, 3).to(dtype), torch.rand(0, 3).to(dtype)
    check(nt.binary_cross_entropy, BCE, [x, y, None], dict(reduction=reduction), [0], dtype)
    check(nt.binary_cross_entropy_with_logits, BCE_WITH_LOGITS, [x, y, None, None], dict(reduction=reduction),
          [0, 1], dtype)
    check(nt.mse_loss, MSE, [x, torch.rand(3).to(dtype)], dict(reduction=reduction), [0, 1], dtype)


@pytest.mark.parametrize("dtypes", [(torch.float32, torch.float16), (torch.float16, torch.bfloat16),
                                    (torch.bfloat16, torch.float32)])
def test_mixed_dtypes_give_torch_result_dtype(dtypes):
    g = torch.Generator().manual_seed(5)
    x, y = probabilities((4, 3), dtypes[0], g), probabilities((4, 3), dtypes[1], g)
    result = torch.promote_types(*dtypes)
    loss = nt.binary_cross_entropy(x, y, reduction="sum")
    assert loss.dtype == result
    expected = BCE(x.double(), y.double(), reduction="sum")
    torch.testing.assert_close(loss.double(), expected, rtol=1e-2, atol=0)
    loss = nt.binary_cross_entropy_with_logits(x, y, reduction="none")
    assert loss.dtype == result
    torch.testing.assert_close(loss.double(), BCE_WITH_LOGITS(x.double(), y.double(), reduction="none"),
                               rtol=1e-2, atol=1e-3)
    x.requires_grad_(True)
    y.requires_grad_(True)
    loss = nt.mse_loss(x, y, reduction="mean")
    assert loss.dtype == result
    torch.testing.assert_close(loss.double(), MSE(x.double(), y.double()), rtol=1e-2, atol=1e-4)
    loss.backward()  # each gradient in its operand's dtype, as torch gives it
    assert x.grad.dtype == dtypes[0] and y.grad.dtype == dtypes[1]
    torch.testing.assert_close(x.grad.double(), -y.grad.double(), rtol=1e-2, atol=1e-4)


def test_large_mean_is_accurate():
    g = torch.Generator().manual_seed(3)
    x, y = probabilities((1 << 20,), torch.float32, g), probabilities((1 << 20,), torch.float32, g)
    expected = BCE(x.double(), y.double())
    assert abs(float(nt.binary_cross_entropy(x, y)) - float(expected)) <= 1e-6 * float(expected)


def test_outputs_do_not_alias_inputs():
    x = torch.full((3, 4), 0.25)
    y = torch.zeros(3, 4)
    loss = nt.binary_cross_entropy(x, y, reduction="none")
    assert loss.data_ptr() not in (x.data_ptr(), y.data_ptr())
    assert torch.equal(x, torch.full((3, 4), 0.25)) and torch.equal(y, torch.zeros(3, 4))
