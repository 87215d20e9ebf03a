"""The autograd graph a loss records, as torch's own losses record theirs: a node only when an
operand needs a gradient, edges to the operands it came from, its saved tensors freed by a
backward (a second one raises) or kept by retain_graph, an in-place change to a saved
operand refused. Every loss of test_hostile_tensors.FUNCTIONALS, each operand it gives a
gradient for."""

import pytest
import torch

import nnplug.torch as nt
from test_hostile_tensors import FUNCTIONALS

CASES = [(name, position) for name, loss in FUNCTIONALS.items() for position in loss.grads]


def _loss(name, operands, reduction="sum"):
    return getattr(nt, name)(**operands, **FUNCTIONALS[name].attributes, reduction=reduction)


def _through_a_node(name, position):
    """The operands, `position`'s a non-leaf (its leaf * 1) so that it may change in place,
    and that leaf."""
    operands = FUNCTIONALS[name].valid()
    leaf = operands[position].detach().clone().requires_grad_(True)
    operands[position] = leaf * 1
    return operands, leaf


@pytest.mark.parametrize("name,position", CASES)
def test_the_gradient_reaches_the_leaf_behind_a_node(name, position):
    operands, leaf = _through_a_node(name, position)
    loss = _loss(name, operands)
    assert loss.requires_grad and loss.grad_fn is not None
    loss.backward()
    expected_operands = FUNCTIONALS[name].valid()
    expected_leaf = expected_operands[position].requires_grad_(True)
    _loss(name, expected_operands).backward()
    torch.testing.assert_close(leaf.grad, expected_leaf.grad, rtol=0, atol=0)


@pytest.mark.parametrize("name,position", CASES)
def test_a_second_backward_raises_unless_the_graph_is_retained(name, position):
    operands = FUNCTIONALS[name].valid()
    leaf = operands[position].requires_grad_(True)  # a leaf: the loss's node is the only one
    loss = _loss(name, operands)
    loss.backward(retain_graph=True)
    once = leaf.grad.clone()
    loss.backward()  # the graph was retained: the gradient adds up
    torch.testing.assert_close(leaf.grad, 2 * once)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()


@pytest.mark.parametrize("name,position", CASES)
def test_an_in_place_change_to_a_saved_operand_is_refused(name, position):
    operands, _ = _through_a_node(name, position)
    loss = _loss(name, operands)
    with torch.no_grad():
        operands[position].mul_(1.0)  # same values, a new version
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


@pytest.mark.parametrize("name", sorted(FUNCTIONALS))
def test_no_node_without_an_operand_that_needs_a_gradient(name):
    operands = FUNCTIONALS[name].valid()
    assert _loss(name, operands).grad_fn is None
    operands["input"].requires_grad_(True)
    with torch.no_grad():
        assert _loss(name, operands).grad_fn is None
    node = _loss(name, operands).grad_fn
    assert node.name() == "".join(word.title() for word in name.split("_")) + "Backward"  # torch's style
