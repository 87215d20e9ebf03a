#!/usr/bin/python3
"""Generates the golden cases of the ops with a class axis with PyTorch.

Writes tests/golden/class_ops_golden.cases, read by the conformance kit's golden group
(conformance/class_cases.cpp) on every backend, so the tests need no PyTorch. Needs Debian's
python3-torch (PyTorch 1.13):

    /usr/bin/python3 tools/golden/generate_class_golden.py [--output ...]

Semantics: docs/ops/nll_loss.md and docs/ops/cross_entropy_loss.md. Each case's expectations
are PyTorch's float64 results on the operands' values as stored (16-bit inputs rounded first):
F.nll_loss and aten's nll_loss_backward / nll_loss2d_backward (the total weight summed over the
rows not ignored), F.cross_entropy with its label smoothing and log_softmax, and autograd's
gradient of F.cross_entropy for the Grad op (which gets logProb rounded to its dtype).

Format, one case per block (values in decimal, integers for integer tensors):

    case <name> <aclnn api>
    tensor <f32|f16|bf16|i64|i32|u8> <ndim> <dims...> <values...>   # one per operand, in signature order
    tensor none                                                      # an absent optional operand
    attr <int64|double|bool|word> <value>                           # in signature order
    expect <operand index> <count> <float64 values...>               # an output's values after the run
    end
"""
import argparse
from pathlib import Path

import torch
import torch.nn.functional as F

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
          "i64": torch.int64, "i32": torch.int32, "u8": torch.uint8}
SENTINEL = 1234.5
REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def stored(values, dtype):
    """The values as a tensor of dtype holds them, in float64."""
    return values.to(DTYPES[dtype]).to(torch.float64)


def tensor_line(dtype, values):
    if values is None:
        return "tensor none"
    flat = values.flatten().tolist()
    text = " ".join(str(int(v)) if dtype in ("i64", "i32", "u8") else repr(float(v)) for v in flat)
    return "tensor {} {} {} {}".format(dtype, values.dim(), " ".join(str(d) for d in values.shape), text).rstrip()


def expect_line(index, values):
    flat = values.flatten().tolist()
    return "expect {} {} {}".format(index, len(flat), " ".join(repr(float(v)) for v in flat))


def sentinel(shape):
    return torch.full(shape, SENTINEL, dtype=torch.float64)


class Case:
    def __init__(self, name, api):
        self.lines = ["case {} {}".format(name, api)]

    def tensor(self, dtype, values):
        self.lines.append(tensor_line(dtype, values))

    def attr(self, kind, value):
        self.lines.append("attr {} {}".format(kind, value))

    def expect(self, index, values):
        self.lines.append(expect_line(index, values))

    def text(self):
        return "\n".join(self.lines + ["end"])


def problem(generator, shape, ignore, log_probs):
    """Inputs (log-probabilities or logits), class indices with some rows ignored, weights."""
    classes = shape[1] if len(shape) >= 2 else shape[0]
    x = torch.rand(shape, generator=generator, dtype=torch.float64) * 8 - 4
    if log_probs:
        x = torch.log_softmax(x, dim=1 if len(shape) >= 2 else 0)
    target_shape = [shape[0]] + list(shape[2:]) if len(shape) >= 2 else []
    target = torch.randint(0, classes, target_shape, generator=generator)
    if ignore >= 0 and target.numel() > 2:
        target.view(-1)[1] = ignore
    weight = torch.rand([classes], generator=generator, dtype=torch.float64) * 2 + 0.1
    return x, target, weight


def nll_cases(generator):
    cases = []
    for api, shape, back in (("aclnnNLLLoss", [9, 5], "aclnnNLLLossBackward"),
                             ("aclnnNLLLoss2d", [2, 4, 3, 5], "aclnnNLLLoss2dBackward")):
        for reduction in (0, 1, 2):
            for dtype, target_dtype, ignore in (("f32", "i64", -100), ("f32", "i32", 2), ("f16", "u8", 1)):
                x, target, weight = problem(generator, shape, ignore, log_probs=True)
                x, weight = stored(x, dtype), stored(weight, dtype)
                mask = target != ignore
                total = weight[target.clamp(0)][mask].sum()
                loss = F.nll_loss(x, target, weight, reduction=REDUCTIONS[reduction], ignore_index=ignore)
                name = "{}_{}_{}_{}".format(REDUCTIONS[reduction], dtype, target_dtype, "x".join(map(str, shape)))
                case = Case(name, api)
                case.tensor(dtype, x)
                case.tensor(target_dtype, target)
                case.tensor(dtype, weight)
                case.tensor("f32", sentinel(loss.shape))
                case.tensor("f32", sentinel([1]))
                case.attr("int64", reduction)
                case.attr("int64", ignore)
                case.expect(3, loss)
                case.expect(4, total.reshape(1) if reduction else sentinel([1]))
                cases.append(case)
                grad = torch.full(loss.shape, 0.75, dtype=torch.float64) if reduction == 0 else torch.tensor(1.5, dtype=torch.float64)
                backward = torch.ops.aten.nll_loss2d_backward if len(shape) == 4 else torch.ops.aten.nll_loss_backward
                expected = backward(grad, x, target, weight, reduction, ignore, total)
                case = Case(name, back)
                case.tensor(dtype, stored(grad, dtype))
                case.tensor(dtype, x)
                case.tensor(target_dtype, target)
                case.tensor(dtype, weight)
                case.tensor(dtype, stored(total.reshape(1), dtype))
                case.tensor(dtype, sentinel(x.shape))
                case.attr("int64", reduction)
                case.attr("int64", ignore)
                case.expect(5, expected)
                cases.append(case)
    return cases


def grad_from_log_prob(lp, grad, target, weight, ignore, reduction, smoothing):
    """docs/ops/cross_entropy_loss.md's gradient: p = exp(logProb), not renormalised."""
    rows, classes = lp.shape
    w = weight if weight is not None else torch.ones(classes, dtype=torch.float64)
    counted = target != ignore if ignore >= 0 else torch.ones(rows, dtype=torch.bool)
    w_t = torch.where(counted, w[target.clamp(0)], torch.zeros(rows, dtype=torch.float64))
    g = grad if reduction == 0 else grad.expand(rows)
    if reduction == 1:
        g = g / w_t.sum()
    p = lp.exp()
    onehot = F.one_hot(target.clamp(0), classes).to(torch.float64)
    nll = (1 - smoothing) * w_t[:, None] * (p - onehot)
    smooth = smoothing / classes * (p * w.sum() - w[None, :])
    return torch.where(counted[:, None], g[:, None] * (nll + smooth), torch.zeros_like(p))


def cross_entropy_cases(generator):
    cases = []
    for reduction in (0, 1, 2):
        for dtype, weighted, ignore, smoothing in (("f32", False, -100, 0.0), ("f32", True, 3, 0.1),
                                                   ("bf16", True, -100, 0.25)):
            x, target, weight = problem(generator, [11, 7], ignore, log_probs=False)
            x = stored(x, dtype)
            w = weight.to(torch.float32).to(torch.float64) if weighted else None
            word = REDUCTIONS[reduction]
            loss = F.cross_entropy(x, target, w, ignore_index=ignore, reduction=word, label_smoothing=smoothing)
            log_prob = torch.log_softmax(x, dim=1)
            name = "{}_{}_{}_ls{}".format(word, dtype, "weighted" if weighted else "unweighted", smoothing)
            case = Case(name, "aclnnCrossEntropyLoss")
            case.tensor(dtype, x)
            case.tensor("i64", target)
            case.tensor("f32", w)
            case.tensor(dtype, sentinel(loss.shape if reduction == 0 else [1]))
            case.tensor(dtype, sentinel(x.shape))
            case.tensor(dtype, sentinel([1]))
            case.tensor(dtype, sentinel([11]))
            for kind, value in (("word", word), ("int64", ignore), ("double", smoothing), ("double", 0.0),
                                ("bool", 0)):
                case.attr(kind, value)
            case.expect(3, loss.reshape(-1))
            case.expect(4, log_prob)
            cases.append(case)
            # The gradient from logProb as the forward stores it, by the page's formula, which
            # is autograd's gradient of F.cross_entropy (checked here on the exact log_softmax).
            lp = stored(log_prob, dtype)
            grad = torch.full(loss.shape, 0.5, dtype=torch.float64) if reduction == 0 else torch.tensor(2.0, dtype=torch.float64)
            args = (target, w, ignore, reduction, smoothing)
            logits = x.clone().requires_grad_(True)
            autograd, = torch.autograd.grad(
                F.cross_entropy(logits, target, w, ignore_index=ignore, reduction=word, label_smoothing=smoothing),
                logits, grad)
            assert torch.allclose(grad_from_log_prob(log_prob, grad, *args), autograd, rtol=1e-10, atol=1e-12)
            expected = grad_from_log_prob(lp, grad, *args)
            case = Case(name, "aclnnCrossEntropyLossGrad")
            case.tensor(dtype, stored(grad, dtype))
            case.tensor(dtype, lp)
            case.tensor("i64", target)
            case.tensor("f32", w)
            case.tensor(None, None)
            case.tensor(None, None)
            case.tensor(dtype, sentinel(x.shape))
            for kind, value in (("word", word), ("int64", ignore), ("double", smoothing), ("double", 0.0)):
                case.attr(kind, value)
            case.expect(6, expected)
            cases.append(case)
    return cases


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = Path(__file__).resolve().parents[2] / "tests" / "golden" / "class_ops_golden.cases"
    parser.add_argument("--output", type=Path, default=default)
    args = parser.parse_args()
    generator = torch.Generator().manual_seed(20261207)
    cases = nll_cases(generator) + cross_entropy_cases(generator)
    header = "# Generated by tools/golden/generate_class_golden.py (PyTorch {}); do not edit.\n".format(
        torch.__version__)
    args.output.write_text(header + "\n".join(c.text() for c in cases) + "\n")
    print("wrote {} cases to {}".format(len(cases), args.output))


if __name__ == "__main__":
    main()
