"""BCELoss, BCEWithLogitsLoss and MSELoss as drop-in replacements for torch's modules."""

import copy

import pytest
import torch

import nnplug.torch as nt


def train(model, loss_module, features, labels, steps=20, lr=0.5):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = loss_module(model(features).squeeze(1), labels)
        loss.backward()
        optimizer.step()
        losses.append(float(loss))
    return losses


@pytest.mark.parametrize("with_logits", [True, False])
def test_training_follows_torchs_module(with_logits):
    g = torch.Generator().manual_seed(1)
    features = torch.randn(64, 5, generator=g)
    labels = (features[:, 0] + 0.5 * features[:, 1] > 0).float()
    weight = torch.rand(64, generator=g) + 0.5
    layers = [torch.nn.Linear(5, 1)] + ([] if with_logits else [torch.nn.Sigmoid()])
    model = torch.nn.Sequential(*layers)
    theirs = copy.deepcopy(model)
    if with_logits:
        pos_weight = torch.tensor([1.7])
        ours_loss = nt.BCEWithLogitsLoss(weight=weight, pos_weight=pos_weight)
        their_loss = torch.nn.BCEWithLogitsLoss(weight=weight, pos_weight=pos_weight)
    else:
        ours_loss, their_loss = nt.BCELoss(weight=weight), torch.nn.BCELoss(weight=weight)
    ours = train(model, ours_loss, features, labels)
    expected = train(theirs, their_loss, features, labels)
    torch.testing.assert_close(torch.tensor(ours), torch.tensor(expected), rtol=1e-5, atol=1e-6)
    assert ours[-1] < 0.7 * ours[0]  # it learns
    for mine, reference in zip(model.parameters(), theirs.parameters()):
        torch.testing.assert_close(mine, reference, rtol=1e-4, atol=1e-5)


def test_modules_keep_weights_as_buffers_like_torch():
    weight, pos_weight = torch.rand(3), torch.rand(3)
    ours = nt.BCEWithLogitsLoss(weight, reduction="sum", pos_weight=pos_weight)
    theirs = torch.nn.BCEWithLogitsLoss(weight, reduction="sum", pos_weight=pos_weight)
    assert ours.state_dict().keys() == theirs.state_dict().keys()
    assert ours.reduction == theirs.reduction == "sum"
    assert nt.BCELoss().state_dict().keys() == torch.nn.BCELoss().state_dict().keys()
    assert nt.BCELoss(torch.ones(2)).state_dict().keys() == torch.nn.BCELoss(torch.ones(2)).state_dict().keys()
    moved = ours.to(torch.bfloat16)
    assert moved.weight.dtype == torch.bfloat16 and moved.pos_weight.dtype == torch.bfloat16


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_module_reductions_match(reduction):
    x, y = torch.randn(4, 3), torch.rand(4, 3)
    torch.testing.assert_close(nt.BCEWithLogitsLoss(reduction=reduction)(x, y),
                               torch.nn.BCEWithLogitsLoss(reduction=reduction)(x, y))
    p = torch.sigmoid(x)
    torch.testing.assert_close(nt.BCELoss(reduction=reduction)(p, y), torch.nn.BCELoss(reduction=reduction)(p, y))
    torch.testing.assert_close(nt.MSELoss(reduction=reduction)(x, y), torch.nn.MSELoss(reduction=reduction)(x, y))


def test_mse_regression_follows_torchs_module():
    g = torch.Generator().manual_seed(4)
    features = torch.randn(64, 5, generator=g)
    targets = features @ torch.tensor([1.0, -2.0, 0.5, 0.0, 3.0]) + 0.1 * torch.randn(64, generator=g)
    model = torch.nn.Linear(5, 1)
    theirs = copy.deepcopy(model)
    ours = train(model, nt.MSELoss(), features, targets, steps=20, lr=0.05)
    expected = train(theirs, torch.nn.MSELoss(), features, targets, steps=20, lr=0.05)
    torch.testing.assert_close(torch.tensor(ours), torch.tensor(expected), rtol=1e-5, atol=1e-6)
    assert ours[-1] < 0.3 * ours[0]  # it learns
    for mine, reference in zip(model.parameters(), theirs.parameters()):
        torch.testing.assert_close(mine, reference, rtol=1e-4, atol=1e-5)
