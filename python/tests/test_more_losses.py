"""nnplug.torch's regression, margin, divergence and multi-class losses against
torch.nn.functional in float64: every dtype and reduction, random shapes, broadcasts, strided
views, ignored classes, label smoothing, N-D class inputs, and their gradients (input's, and
target's where torch has one)."""

import pytest
import torch
import torch.nn.functional as F

import nnplug
import nnplug.torch as nt
from reference import TOLERANCE, assert_close, loss_and_grads, nnplug_loss_and_grads

DTYPES = [torch.float32, torch.float16, torch.bfloat16]
REDUCTIONS = ["none", "mean", "sum"]


def randn(shape, dtype, g, scale=2.0):
    return (torch.randn(shape, generator=g, dtype=torch.float64) * scale).to(dtype)


def random_shape(g, least_rank=0):
    rank = int(torch.randint(least_rank, 5, (1,), generator=g))
    return tuple(int(d) for d in torch.randint(1, 6, (rank,), generator=g))


def broadcast_first(function):
    """torch's loss on operands broadcast to each other first (as the aclnn ops do)."""
    def reference(input, target, *args, **kwargs):
        input, target = torch.broadcast_tensors(input, target)
        return function(input, target, *args, **kwargs)
    return reference


def kl_operands(shape, dtype, g, log_target):
    x = torch.randn(shape, generator=g, dtype=torch.float64).log_softmax(-1) if shape else torch.tensor(-0.7)
    t = torch.rand(shape, generator=g, dtype=torch.float64) * 0.9 + 0.05
    return [x.to(dtype), (t.log() if log_target else t).to(dtype)]


# name: (nnplug function, torch reference, operands(shape, dtype, g, kwargs), keyword variants,
#        the operands torch differentiates)
ELEMENTWISE = {
    "l1_loss": (nt.l1_loss, broadcast_first(F.l1_loss), lambda s, d, g, k: [randn(s, d, g), randn(s, d, g)],
                [{}], [0, 1]),
    "smooth_l1_loss": (nt.smooth_l1_loss, broadcast_first(F.smooth_l1_loss),
                       lambda s, d, g, k: [randn(s, d, g), randn(s, d, g)],
                       [{"beta": 1.0}, {"beta": 0.5}, {"beta": 3.0}], [0, 1]),
    "huber_loss": (nt.huber_loss, broadcast_first(F.huber_loss), lambda s, d, g, k: [randn(s, d, g), randn(s, d, g)],
                   [{"delta": 1.0}, {"delta": 0.4}, {"delta": 2.5}], [0, 1]),
    "soft_margin_loss": (nt.soft_margin_loss, F.soft_margin_loss,
                         lambda s, d, g, k: [randn(s, d, g), (torch.rand(s, generator=g) > 0.5).to(d) * 2 - 1],
                         [{}], [0]),
    "kl_div": (nt.kl_div, F.kl_div, lambda s, d, g, k: kl_operands(s, d, g, k.get("log_target", False)),
               [{"log_target": False}, {"log_target": True}], [0, 1]),
}


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS + ["batchmean"])
@pytest.mark.parametrize("seed", range(3))
def test_elementwise_losses_match_torch(name, dtype, reduction, seed):
    function, reference, operands, variants, grad_of = ELEMENTWISE[name]
    if reduction == "batchmean" and name != "kl_div":
        pytest.skip("batchmean is kl_div's")
    g = torch.Generator().manual_seed(seed)
    shape = random_shape(g, least_rank=1 if reduction == "batchmean" else 0)
    kwargs = dict(variants[seed % len(variants)], reduction=reduction)
    inputs = operands(shape, dtype, g, kwargs)
    expected, expected_grads = loss_and_grads(reference, inputs, kwargs, grad_of)
    actual, actual_grads = nnplug_loss_and_grads(function, inputs, kwargs, grad_of)
    assert_close(actual, expected, dtype)
    for i, actual_grad, expected_grad in zip(grad_of, actual_grads, expected_grads):
        assert_close(actual_grad, expected_grad, inputs[i].dtype)


@pytest.mark.parametrize("name", ["l1_loss", "smooth_l1_loss", "huber_loss"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_regression_losses_broadcast_and_read_views(name, reduction):
    """target (5) broadcast over input's rows, input a transposed view: each gradient summed back
    to its operand's shape."""
    function, reference, _, variants, grad_of = ELEMENTWISE[name]
    g = torch.Generator().manual_seed(7)
    x = randn((5, 3), torch.float32, g).t()
    y = randn((5,), torch.float32, g)
    kwargs = dict(variants[-1], reduction=reduction)
    expected, expected_grads = loss_and_grads(reference, [x, y], kwargs, grad_of)
    actual, actual_grads = nnplug_loss_and_grads(function, [x, y], kwargs, grad_of)
    assert_close(actual, expected, torch.float32)
    for actual_grad, expected_grad in zip(actual_grads, expected_grads):
        assert_close(actual_grad, expected_grad, torch.float32)


def class_operands(shape, dtype, g, ignore_index, weighted):
    """Logits of `shape` (class axis 1, or 0 for one dim), class indices with about one in five
    equal to ignore_index, and a positive weight per class."""
    classes = shape[0] if len(shape) == 1 else shape[1]
    target_shape = () if len(shape) == 1 else shape[:1] + shape[2:]
    target = torch.randint(0, classes, target_shape, generator=g)
    ignored = torch.rand(target_shape, generator=g) < 0.2
    target = torch.where(ignored, torch.tensor(ignore_index), target)
    weight = (torch.rand(classes, generator=g, dtype=torch.float64) + 0.2).to(dtype) if weighted else None
    return [randn(shape, dtype, g), target, weight]


def assert_close_to_scale(actual, expected, dtype, scale):
    """Each element held to the dtype's tolerance of `scale`, not of itself: a class loss
    x[t] - lse(x) cancels to a small value with the rounding of lse's magnitude, and a class
    gradient p - [c = t] comes from log-probabilities rounded into the dtype (CANN's
    logProb), p of a likely class cancelling against 1."""
    assert actual.dtype == dtype and actual.shape == expected.shape
    rtol = TOLERANCE[dtype]["rtol"]
    torch.testing.assert_close(actual.double(), expected, rtol=rtol, atol=2 * rtol * scale + 1e-12, equal_nan=True)


def largest(tensor):
    return float(tensor.double().abs().max()) if tensor.numel() else 0.0


CLASS_SHAPES = [(5,), (4, 3), (3, 4, 5), (2, 3, 4, 5), (2, 3, 2, 2, 3), (0, 3)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", CLASS_SHAPES, ids=str)
@pytest.mark.parametrize("ignore_index", [-100, 1])
def test_cross_entropy_matches_torch(dtype, reduction, shape, ignore_index):
    g = torch.Generator().manual_seed(len(shape) * 10 + ignore_index % 7)
    for weighted, smoothing in ((False, 0.0), (True, 0.0), (True, 0.2)):
        inputs = class_operands(shape, dtype, g, ignore_index, weighted)
        kwargs = dict(ignore_index=ignore_index, reduction=reduction, label_smoothing=smoothing)
        expected, expected_grads = loss_and_grads(F.cross_entropy, inputs, kwargs, [0])
        actual, actual_grads = nnplug_loss_and_grads(nt.cross_entropy, inputs, kwargs, [0])
        assert_close_to_scale(actual, expected, dtype, 1 + largest(inputs[0]))
        assert_close_to_scale(actual_grads[0], expected_grads[0], dtype, largest(expected_grads[0]))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", CLASS_SHAPES, ids=str)
@pytest.mark.parametrize("ignore_index", [-100, 2])
def test_nll_loss_matches_torch(dtype, reduction, shape, ignore_index):
    g = torch.Generator().manual_seed(len(shape) * 10 + ignore_index % 5)
    for weighted in (False, True):
        inputs = class_operands(shape, dtype, g, ignore_index, weighted)
        inputs[0] = inputs[0].double().log_softmax(0 if len(shape) == 1 else 1).to(dtype)
        kwargs = dict(ignore_index=ignore_index, reduction=reduction)
        expected, expected_grads = loss_and_grads(F.nll_loss, inputs, kwargs, [0])
        actual, actual_grads = nnplug_loss_and_grads(nt.nll_loss, inputs, kwargs, [0])
        assert_close_to_scale(actual, expected, dtype, 1 + largest(inputs[0]))
        assert_close_to_scale(actual_grads[0], expected_grads[0], dtype, largest(expected_grads[0]))


def test_every_target_ignored_gives_torchs_nan_and_zero_gradient():
    x = torch.randn(3, 4, requires_grad=True)
    target = torch.full((3,), -100)
    for function in (nt.cross_entropy, nt.nll_loss):
        loss = function(x, target)
        assert torch.isnan(loss)
        (grad,) = torch.autograd.grad(loss, [x])
        assert torch.equal(grad, torch.zeros(3, 4))


def test_a_class_index_out_of_range_is_refused_by_element():
    x = torch.randn(4, 3)
    for function in (nt.cross_entropy, nt.nll_loss):
        with pytest.raises(nnplug.Error, match="target element 2 is 7") as caught:
            function(x, torch.tensor([0, 1, 7, -100]))
        # found by the kernel: the call's status on cpu_tbb, the stream's synchronize's on the
        # asynchronous atlas_emu
        assert caught.value.status == (100000 if nnplug.backend() == "atlas_emu" else 161002)
    # C itself, next to a target torch ignores: C is no class, whatever ignore_index maps to
    with pytest.raises(nnplug.Error, match="target element 3 is 3"):
        nt.cross_entropy(x, torch.tensor([0, -100, 1, 3]))


def test_class_probability_targets_are_refused_clearly():
    with pytest.raises(TypeError, match="class probabilities"):
        nt.cross_entropy(torch.randn(2, 3), torch.rand(2, 3).softmax(1))


def test_a_target_of_the_wrong_shape_is_refused():
    with pytest.raises(ValueError, match="target has shape"):
        nt.cross_entropy(torch.randn(2, 3, 4), torch.zeros(4, 2, dtype=torch.long))
    with pytest.raises(ValueError, match="target has shape"):
        nt.nll_loss(torch.randn(2, 3, 4, 1, 1), torch.zeros(2, 1, 4, 1, dtype=torch.long))


def test_weight_gradient_is_refused_by_name():
    w = torch.rand(3, requires_grad=True)
    for function in (nt.cross_entropy, nt.nll_loss):
        with pytest.raises(RuntimeError, match="'weight'"):
            function(torch.randn(2, 3, requires_grad=True), torch.tensor([0, 2]), weight=w).backward()
    with pytest.raises(RuntimeError, match="'target'"):
        nt.soft_margin_loss(torch.randn(3, requires_grad=True), torch.ones(3, requires_grad=True)).backward()


MODULES = [
    (nt.L1Loss(), F.l1_loss, "regression"), (nt.SmoothL1Loss(beta=0.5), lambda x, y: F.smooth_l1_loss(x, y, beta=0.5),
                                             "regression"),
    (nt.HuberLoss(delta=2.0), lambda x, y: F.huber_loss(x, y, delta=2.0), "regression"),
    (nt.MSELoss(reduction="sum"), lambda x, y: F.mse_loss(x, y, reduction="sum"), "regression"),
    (nt.SoftMarginLoss(), F.soft_margin_loss, "margin"),
    (nt.KLDivLoss(reduction="batchmean", log_target=True),
     lambda x, y: F.kl_div(x, y, reduction="batchmean", log_target=True), "divergence"),
    (nt.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0, 0.5]), label_smoothing=0.1),
     lambda x, y: F.cross_entropy(x, y, weight=torch.tensor([1.0, 2.0, 0.5]), label_smoothing=0.1), "class"),
    (nt.NLLLoss(ignore_index=0), lambda x, y: F.nll_loss(x, y, ignore_index=0), "class"),
    (nt.BCEWithLogitsLoss(pos_weight=torch.tensor([2.0, 1.0, 0.5])),
     lambda x, y: F.binary_cross_entropy_with_logits(x, y, pos_weight=torch.tensor([2.0, 1.0, 0.5])), "binary"),
]


def module_operands(kind, g):
    x = torch.randn(4, 3, generator=g)
    if kind == "class":
        return x, torch.tensor([0, 2, 1, 2])
    if kind == "margin":
        return x, torch.tensor([1.0, -1.0, 1.0]).expand(4, 3)
    if kind == "divergence":
        return x.log_softmax(1), torch.randn(4, 3, generator=g).log_softmax(1)
    if kind == "binary":
        return x, torch.rand(4, 3, generator=g)
    return x, torch.randn(4, 3, generator=g)


@pytest.mark.parametrize("module, reference, kind", MODULES, ids=lambda m: type(m).__name__)
def test_modules_match_torch_and_script(module, reference, kind):
    """Each module as torch's, and the same inside torch.jit.script (no Python per call)."""
    g = torch.Generator().manual_seed(3)
    x, y = module_operands(kind, g)
    scripted = torch.jit.script(module)
    for loss in (module, scripted):
        torch.testing.assert_close(loss(x, y), reference(x, y), rtol=2e-5, atol=1e-6)
        leaf = x.clone().requires_grad_()
        (grad,) = torch.autograd.grad(loss(leaf, y), [leaf])
        expected_leaf = x.clone().requires_grad_()
        (expected,) = torch.autograd.grad(reference(expected_leaf, y), [expected_leaf])
        torch.testing.assert_close(grad, expected, rtol=2e-5, atol=1e-6)


def test_kl_div_module_takes_batchmean_and_others_refuse_it():
    nt.KLDivLoss(reduction="batchmean")
    with pytest.raises(ValueError, match="batchmean"):
        nt.KLDivLoss(reduction="avg")
    with pytest.raises(ValueError, match="reduction"):
        nt.L1Loss(reduction="batchmean")
    with pytest.raises(ValueError, match="reduction"):
        nt.l1_loss(torch.zeros(2), torch.zeros(2), reduction="batchmean")


def test_huber_delta_must_be_positive():
    with pytest.raises(ValueError, match="delta"):
        nt.huber_loss(torch.zeros(2), torch.zeros(2), delta=0.0)


def test_large_outputs_reuse_freed_blocks_and_stay_correct():
    """A large output's memory returns to a bounded cache when its tensor dies and serves the
    next output of about its size, pages already mapped; its old values never show."""
    from nnplug import _nnplug_torch

    g = torch.Generator().manual_seed(11)
    x, y = torch.randn(1 << 20, generator=g), torch.randn(1 << 20, generator=g)
    first = nt.l1_loss(x, y, reduction="none")
    address = first.data_ptr()
    del first
    assert _nnplug_torch.cached_bytes() >= 4 << 20
    second = nt.mse_loss(x, y, reduction="none")  # the same block, other values
    assert second.data_ptr() == address
    torch.testing.assert_close(second, (x - y) ** 2)
    held = [nt.l1_loss(x, y, reduction="none") for _ in range(300)]  # 1.2 GiB alive at once
    del held
    assert _nnplug_torch.cached_bytes() <= 1 << 30
