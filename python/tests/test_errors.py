"""Bad input gets a clear exception and the process stays usable."""

import pytest
import torch

import nnplug
import nnplug.torch as nt
from reference import raw


def usable():
    """A correct call still works after a refused one."""
    x = torch.tensor([0.25, 0.5])
    expected = torch.nn.functional.binary_cross_entropy(x, torch.tensor([0.0, 1.0]))
    torch.testing.assert_close(nt.binary_cross_entropy(x, torch.tensor([0.0, 1.0])), expected)
    return True


def test_shape_mismatch_is_the_runtimes_error():
    with pytest.raises(nnplug.Error) as caught:
        nt.binary_cross_entropy(torch.rand(3, 5), torch.rand(4, 5))
    assert caught.value.status == 161002
    assert "aclnnBinaryCrossEntropy" in str(caught.value) and "[4,5]" in str(caught.value)
    assert isinstance(caught.value, RuntimeError)
    assert usable()


def test_operands_that_do_not_broadcast_to_each_other_are_the_runtimes_error():
    with pytest.raises(nnplug.Error) as caught:
        nt.mse_loss(torch.rand(3, 5), torch.rand(4, 1))
    assert caught.value.status == 161002
    assert "aclnnMseLoss" in str(caught.value)
    assert usable()


def test_weight_that_does_not_broadcast_is_refused():
    with pytest.raises(nnplug.Error) as caught:
        nt.binary_cross_entropy_with_logits(torch.rand(3, 5), torch.rand(3, 5), weight=torch.rand(4))
    assert caught.value.status == 161002
    assert "aclnnBinaryCrossEntropyWithLogits" in str(caught.value)
    assert usable()


def test_shape_mismatch_in_a_gradient_is_the_runtimes_error():
    # torch's autograd checks the incoming gradient's shape itself; call the op directly.
    from nnplug import _nnplug

    x, y, grad = torch.rand(3, 5), torch.rand(3, 5), torch.ones(2, 5)
    out = torch.empty(3, 5)
    described = [raw(t) for t in (grad, x, y)] + [None]
    with pytest.raises(nnplug.Error) as caught:
        _nnplug.run("aclnnBinaryCrossEntropyBackward", described, 0, raw(out))
    assert caught.value.status == 161002
    assert "aclnnBinaryCrossEntropyBackward" in str(caught.value) and "[2,5]" in str(caught.value)
    assert usable()


@pytest.mark.parametrize("dtype", [torch.float64, torch.int32, torch.bool, torch.complex64])
def test_other_dtypes_are_a_type_error(dtype):
    with pytest.raises(TypeError, match=str(dtype)):
        nt.binary_cross_entropy(torch.zeros(3, dtype=dtype), torch.zeros(3))
    with pytest.raises(TypeError, match="target"):
        nt.binary_cross_entropy_with_logits(torch.zeros(3), torch.zeros(3, dtype=dtype))
    with pytest.raises(TypeError, match="pos_weight"):
        nt.binary_cross_entropy_with_logits(torch.zeros(3), torch.zeros(3), pos_weight=torch.ones(3, dtype=dtype))
    assert usable()


def test_other_devices_and_layouts_are_a_type_error():
    with pytest.raises(TypeError, match="meta"):
        nt.binary_cross_entropy(torch.zeros(3, device="meta"), torch.zeros(3))
    with pytest.raises(TypeError, match="sparse"):
        nt.binary_cross_entropy(torch.zeros(3).to_sparse(), torch.zeros(3))
    with pytest.raises(TypeError, match="list"):
        nt.binary_cross_entropy([0.5], torch.zeros(1))
    assert usable()


def test_unknown_reduction_is_a_value_error():
    with pytest.raises(ValueError, match="reduction"):
        nt.binary_cross_entropy(torch.rand(3), torch.rand(3), reduction="max")
    with pytest.raises(ValueError, match="reduction"):
        nt.BCEWithLogitsLoss(reduction="avg")


def test_more_than_eight_dims_is_the_runtimes_error():
    x = torch.rand((1,) * 9)
    with pytest.raises(nnplug.Error) as caught:
        nt.binary_cross_entropy(x, x)
    assert caught.value.status == 161002
    assert usable()


def test_gradients_nnplug_does_not_compute_are_refused_by_name():
    x = torch.rand(3, requires_grad=True)
    y = torch.rand(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="'target'"):
        nt.binary_cross_entropy(x, y).backward()
    w = torch.rand(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="'weight'"):
        nt.binary_cross_entropy_with_logits(x, y.detach(), weight=w).backward()
    assert usable()


def test_second_init_is_refused_and_keeps_the_runtime():
    active = nnplug.backend()
    with pytest.raises(nnplug.Error) as caught:
        nnplug.init()
    assert caught.value.status == 100002
    assert nnplug.backend() == active
    assert usable()


def test_init_succeeds_whenever_the_runtime_accepts_the_config(tmp_path):
    """A custom tag under application: and a Latin-1 byte in a comment: the runtime accepts
    the config, so init does; it raised a YAML or Unicode error after aclInit succeeded, and
    left the runtime initialized while is_initialized() said False."""
    from conftest import run_python

    config = tmp_path / "odd.yaml"
    backend = nnplug.backend()
    config.write_bytes(b"# caf\xe9\nbackend: " + backend.encode() + b"\napplication:\n  thing: !custom {a: 1}\n")
    code = f"""
import nnplug
nnplug.init({str(config)!r})
assert nnplug.is_initialized(), "not initialized"
assert nnplug.backend() == {backend!r}, nnplug.backend()
nnplug.finalize()
nnplug.init({str(config)!r})
nnplug.finalize()
print("ok")
"""
    result = run_python(code, {"NNPLUG_BACKEND": "", "NNPLUG_CONFIG": ""})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_tensors_with_a_negative_or_conjugate_bit_give_torchs_values():
    """c.conj().imag is a float32 view with torch's negative bit set: its memory holds the
    negated values. nnplug read the memory (mse_loss 1.728 where torch gives 1.434)."""
    c = torch.complex(torch.tensor([0.1, 0.4, 0.7]), torch.tensor([0.2, 0.5, 0.9]))
    negated = c.conj().imag
    assert negated.is_neg()
    target = torch.tensor([0.3, -0.1, 0.2])
    torch.testing.assert_close(nt.mse_loss(negated, target), torch.nn.functional.mse_loss(negated, target))
    probabilities = torch.complex(torch.tensor([0.1, 0.4]), torch.tensor([-0.3, -0.6])).conj().imag
    labels = torch.tensor([0.0, 1.0])
    torch.testing.assert_close(nt.binary_cross_entropy(probabilities, labels),
                               torch.nn.functional.binary_cross_entropy(probabilities, labels))
    assert usable()


def test_op_names_are_those_of_the_c_api():
    from nnplug import _nnplug

    # every op libnnplug publishes a schema for, found there, not listed in the extension
    assert set(_nnplug.op_names()) == {
        "aclnnBinaryCrossEntropy", "aclnnBinaryCrossEntropyBackward", "aclnnBinaryCrossEntropyWithLogits",
        "aclnnBinaryCrossEntropyWithLogitsBackward", "aclnnBinaryCrossEntropyWithLogitsTargetBackward",
        "aclnnMseLoss", "aclnnMseLossBackward", "aclnnNLLLossBackward", "aclnnNLLLoss2dBackward",
        "aclnnCrossEntropyLossGrad", "aclnnL1Loss", "aclnnL1LossBackward", "aclnnSmoothL1Loss",
        "aclnnSmoothL1LossBackward", "aclnnSoftMarginLoss", "aclnnSoftMarginLossBackward",
        "aclnnKlDiv", "aclnnKlDivBackward", "aclnnKlDivTargetBackward"}
    with pytest.raises(ValueError):
        _nnplug.run("aclnnNoSuchOp", [], 0, (0, 0, (), ()))


def test_an_op_with_several_attributes_takes_each_in_its_type():
    from nnplug import _nnplug

    nnplug.ensure_initialized()
    x = torch.randn(4, 3).log_softmax(1)
    target, weight, ignore = torch.tensor([0, 2, 1, 2]), torch.tensor([1.0, 2.0, 0.5]), 1
    total = weight[target][target != ignore].sum().reshape(1)
    grad = torch.tensor(1.0)  # held: the extension reads it by address
    inputs = [raw(grad), raw(x), raw(target), raw(weight), raw(total)]
    out = torch.full((4, 3), 7.0)
    # aclnnNLLLossBackward's attributes, reduction and ignoreIndex; totalWeight comes after
    # them in the C signature, but the extension passes operands in slot order
    _nnplug.run("aclnnNLLLossBackward", inputs, [1, ignore], raw(out))
    leaf = x.clone().requires_grad_()
    torch.nn.functional.nll_loss(leaf, target, weight=weight, ignore_index=ignore).backward()
    torch.testing.assert_close(out, leaf.grad)
    with pytest.raises(TypeError, match="ignoreIndex must be an int"):
        _nnplug.run("aclnnNLLLossBackward", inputs, [1, 1.5], raw(out))
    with pytest.raises(ValueError, match="takes 2 attributes, not 1"):
        _nnplug.run("aclnnNLLLossBackward", inputs, [1], raw(out))
    with pytest.raises(nnplug.Error, match="reduction 5"):
        _nnplug.run("aclnnNLLLossBackward", inputs, [5, ignore], raw(out))
    assert usable()


def test_second_derivatives_are_refused_not_wrong():
    """create_graph=True (a gradient penalty) is refused at the backward that would build the
    graph: the penalty's own gradient contributed nothing before, silently (input gradients
    up to 22.5 from torch's)."""
    for reduction in ("mean", "none"):
        x = torch.rand(4, requires_grad=True)
        loss = nt.binary_cross_entropy(x, torch.rand(4), reduction=reduction)
        v = torch.ones_like(loss, requires_grad=True)
        with pytest.raises(RuntimeError, match="has no second derivatives"):
            torch.autograd.grad(loss, [x], grad_outputs=v, create_graph=True)
    x = torch.rand(4, requires_grad=True)
    loss = nt.mse_loss(x, torch.rand(4))
    with pytest.raises(RuntimeError, match="mse_loss has no second derivatives"):
        (grad,) = torch.autograd.grad(loss, [x], create_graph=True)
    # first derivatives as before
    (grad,) = torch.autograd.grad(nt.mse_loss(x, torch.zeros(4)), [x])
    torch.testing.assert_close(grad, 2 * x.detach() / 4)
    assert usable()