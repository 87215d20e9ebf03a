#!/usr/bin/python3
"""Generates the golden case list of aclnnKlDiv, aclnnKlDivBackward and aclnnKlDivTargetBackward with PyTorch.

Writes tests/golden/kl_div_golden.txt, read by tests/conformance/golden_cases_test.cpp and the
conformance kit, so the test suite needs no PyTorch. Needs Debian's python3-torch (PyTorch 1.13):

    /usr/bin/python3 tools/golden/generate_kl_div_golden.py [--output ...]

Ops, by their word in ops/kl_div/kl_div_kit.cpp: `kl_div`, `kl_div_backward` and
`kl_div_target_backward`; attributes: reduction (0 none, 1 mean, 2 sum, 3 batchmean), logTarget
(0 or 1). Semantics: docs/ops/kl_div.md. Each case has
- `reference_f64`: PyTorch's float64 result on the operands' values: F.kl_div (1.13: xlogy(t, t)
  - t * x, so 0 where t = 0 and NaN where t < 0, which is also what CANN's kernel gives) and its
  mean, sum or batchmean (the sum over self.size(0), 1 for a 0-d self); the gradients through
  float64 autograd where the shapes allow, else the same formulas.
- `scale_f64`: per view element the magnitude of the terms the float32 expression rounds
  (|t| (|log t| + |x|) for the loss), which the runner allows a few float32 ulps of.
- `expect_ulps <n>`: the output's whole storage after the op, each view element within n ulps of
  the canonical float32 expression (CANN's kernels' order, docs/ops/kl_div.md) evaluated here
  operation by operation in torch float32 on the widened inputs and rounded to out's dtype (4
  for float32, 1 for the 16-bit types): the backends' log and exp are their own. The loss
  without reduction and the gradients; a reduced loss has the reference only.
"""
import argparse
import math
from pathlib import Path

import torch
import torch.nn.functional as F

from golden_writer import Writer, contiguous, expanded, gapped, out_operand, stored_after, transposed, uniform

FORWARD, BACKWARD, TARGET_BACKWARD = "kl_div", "kl_div_backward", "kl_div_target_backward"
F32, F64 = torch.float32, torch.float64
REDUCTIONS = {0: "none", 1: "mean", 2: "sum", 3: "batchmean"}
F32_ULPS = 4


def ulps(dtype):
    return F32_ULPS if dtype == "f32" else 1


def divisor(reduction, self_shape, shape):
    """What the loss's sum is divided by: numel(B) for mean, self.size(0) for batchmean."""
    if reduction == 1:
        return math.prod(shape)
    if reduction == 3:
        return self_shape[0] if len(self_shape) > 0 else 1
    return 1


def canonical_forward(x, t, log_target):
    if log_target:
        return torch.exp(t) * (t - x)
    return t * (torch.log(torch.where(t != 0, t, torch.ones_like(t))) - x)


def canonical_backward(g, t, log_target, scale):
    w = torch.exp(t) if log_target else t
    return torch.neg(w * g) * torch.tensor(scale, dtype=F32)


def canonical_target_backward(g, x, t, log_target, scale):
    gs = g * torch.tensor(scale, dtype=F32)
    if log_target:
        e = torch.exp(t)
        return ((gs * (t - x)) * e) + (gs * e)
    return ((gs * torch.log(t)) - (gs * x)) + ((gs * t) / t)


def forward_case(writer, name, reduction, log_target, self, target, out_dtype):
    name = "kldiv_" + name  # case names are unique across every golden file
    x, y = self.view(), target.view()
    shape = list(torch.broadcast_shapes(x.shape, y.shape))
    x64, y64 = torch.broadcast_tensors(x.to(F64), y.to(F64))
    per_element = F.kl_div(x64, y64, reduction="none", log_target=log_target)
    if log_target:
        magnitude = torch.exp(y64) * (y64.abs() + x64.abs())
    else:
        magnitude = y64.abs() * (torch.log(y64.abs()).abs() + x64.abs())
    magnitude = torch.nan_to_num(magnitude, nan=0.0, posinf=0.0)
    values = canonical_forward(*torch.broadcast_tensors(x.to(F32), y.to(F32)), log_target)
    operands = {"self": self, "target": target}
    attrs = [reduction, int(log_target)]
    if reduction == 0:
        out = out_operand(out_dtype, shape)
        writer.case(name, FORWARD, attrs, operands, "out", out, per_element.flatten().tolist(),
                    expect_ulps=(ulps(out_dtype), stored_after(out, values)), scale=magnitude.flatten().tolist())
        return
    out = out_operand(out_dtype, [])
    n = divisor(reduction, list(x.shape), shape)
    value = per_element.sum() / n if n > 0 or per_element.numel() == 0 else per_element.sum() / n
    if per_element.numel() > 0:
        if reduction in (1, 2):
            aten = F.kl_div(x64, y64, reduction=REDUCTIONS[reduction], log_target=log_target)
            assert torch.allclose(aten, value, rtol=1e-12, equal_nan=True), name
        elif x.dim() > 0 and list(x.shape) == shape:
            aten = F.kl_div(x64, y64, reduction="batchmean", log_target=log_target)
            assert torch.allclose(aten, value, rtol=1e-12, equal_nan=True), name
    writer.case(name, FORWARD, attrs, operands, "out", out, [value.item()],
                scale=[float(magnitude.sum() / max(n, 1))])


def gradient_case(writer, name, op, reduction, log_target, grad, self, target, out_dtype):
    name = "kldiv_" + name
    g, x, y = grad.view(), self.view(), target.view()
    shape = list(torch.broadcast_shapes(g.shape, x.shape, y.shape))
    count = math.prod(shape)
    n = divisor(reduction, list(x.shape), shape)
    scale = 1.0 / n if reduction in (1, 3) and n > 0 else 1.0
    scale32 = float(torch.tensor(scale, dtype=F64).to(F32))
    g64, x64, y64 = torch.broadcast_tensors(g.to(F64), x.to(F64), y.to(F64))
    if op == BACKWARD:
        reference = -(torch.exp(y64) if log_target else y64) * g64 * scale
        values = canonical_backward(*torch.broadcast_tensors(g.to(F32), y.to(F32)), log_target, scale32)
        magnitude = None
    else:
        if log_target:
            reference = g64 * scale * torch.exp(y64) * (y64 - x64 + 1)
            magnitude = (g64 * scale * torch.exp(y64)).abs() * ((y64 - x64).abs() + 1)
        else:
            reference = g64 * scale * (torch.log(y64) - x64 + 1) * (y64 / y64)
            magnitude = (g64 * scale).abs() * (torch.log(y64).abs() + x64.abs() + 1)
        magnitude = torch.nan_to_num(magnitude, nan=0.0, posinf=0.0).flatten().tolist()
        values = canonical_target_backward(*torch.broadcast_tensors(g.to(F32), x.to(F32), y.to(F32)), log_target,
                                           scale32)
    same = count > 0 and list(x.shape) == shape and list(y.shape) == shape
    if same and (reduction == 0 or g.numel() == 1) and (reduction != 3 or x.dim() > 0):
        xa = x.to(F64).clone().requires_grad_(True)
        ya = y.to(F64).clone().requires_grad_(True)
        loss = F.kl_div(xa, ya, reduction=REDUCTIONS[reduction], log_target=log_target)
        loss.backward(g.to(F64).expand(loss.shape) if loss.dim() > 0 else g.to(F64).reshape([]))
        aten = xa.grad if op == BACKWARD else ya.grad
        finite = torch.isfinite(reference) & torch.isfinite(aten)
        assert torch.allclose(aten[finite], reference[finite], rtol=1e-12, atol=1e-300), name
    out = out_operand(out_dtype, shape)
    roles = {"gradOutput": grad, "self": self, "target": target}
    writer.case(name, op, [reduction, int(log_target)], roles, "out" if op == BACKWARD else "gradTarget", out,
                reference.flatten().tolist(), expect_ulps=(ulps(out_dtype), stored_after(out, values)),
                scale=magnitude)


def targets(gen, shape, log_target):
    """Probabilities in (0, 1] with some zeros, or log-probabilities."""
    if log_target:
        return uniform(gen, shape, -5, 0)
    t = uniform(gen, shape, 0.001, 1)
    zero = torch.rand(shape, generator=gen, dtype=F64) < 0.1
    return torch.where(zero, torch.zeros_like(t), t)


SHAPE_PAIRS = [  # (self, target): equal, one-way and two-way broadcasts, 0-d, rank 4
    ([5, 7], [5, 7]), ([5, 7], [7]), ([7], [5, 7]), ([5, 1], [1, 7]), ([], [2, 3]), ([2, 3], []), ([], []),
    ([2, 1, 3, 4], [5, 1, 1]),
]
DTYPE_SETS = [("f32", "f32", "f32"), ("f16", "f16", "f16"), ("bf16", "bf16", "bf16"), ("f16", "bf16", "f32"),
              ("f32", "f16", "f32")]


def shape_cases(writer, gen):
    for si, (self_shape, target_shape) in enumerate(SHAPE_PAIRS):
        for self_dtype, target_dtype, out_dtype in DTYPE_SETS:
            for log_target in (False, True):
                for reduction in REDUCTIONS:
                    self = contiguous(self_dtype, uniform(gen, self_shape, -4, 1))
                    target = contiguous(target_dtype, targets(gen, target_shape, log_target))
                    tag = "shapes{}_{}_{}_{}_l{}_r{}".format(si, self_dtype, target_dtype, out_dtype, int(log_target),
                                                              reduction)
                    forward_case(writer, tag + "_fwd", reduction, log_target, self, target, out_dtype)
                    # The gradient w.r.t. self: target and gradOutput broadcast to self.
                    if list(torch.broadcast_shapes(self_shape, target_shape)) == self_shape:
                        for grad_shape in ([[]] if self_shape == [] else [[], self_shape]):
                            grad = contiguous(out_dtype, uniform(gen, grad_shape, -2, 2))
                            gradient_case(writer, tag + "_bwd_g{}".format(len(grad_shape)), BACKWARD, reduction,
                                          log_target, grad, self, target, out_dtype)
                    grad = contiguous(out_dtype, uniform(gen, [], -2, 2))
                    gradient_case(writer, tag + "_tbwd", TARGET_BACKWARD, reduction, log_target, grad, self, target,
                                  out_dtype)


def layouts(dtype, values):
    yield "contig", contiguous(dtype, values)
    yield "transposed", transposed(dtype, values)
    yield "gapped", gapped(dtype, values)
    yield "expanded", expanded(dtype, values[0].clone(), values.shape[0])


def view_cases(writer, gen):
    for dtype in ("f32", "f16", "bf16"):
        for log_target in (False, True):
            for reduction in REDUCTIONS:
                for (sname, self), (tname, target) in zip(layouts(dtype, uniform(gen, [6, 9], -4, 1)),
                                                          reversed(list(layouts(dtype, targets(gen, [6, 9],
                                                                                               log_target))))):
                    tag = "views_{}_{}_{}_l{}_r{}".format(sname, tname, dtype, int(log_target), reduction)
                    forward_case(writer, tag + "_fwd", reduction, log_target, self, target, dtype)
                    grad = gapped(dtype, uniform(gen, [6, 9], -2, 2))
                    gradient_case(writer, tag + "_bwd", BACKWARD, reduction, log_target, grad, self, target, dtype)
                    gradient_case(writer, tag + "_tbwd", TARGET_BACKWARD, reduction, log_target, grad, self, target,
                                  dtype)


def edge_cases(writer, gen):
    # Targets at 0 (the loss 0, the target gradient NaN), below 0 (NaN), tiny and 1; self at
    # ±inf and NaN; the batchmean divisor is self's first dimension.
    t = torch.tensor([0.0, -0.0, -0.5, 1e-30, 1e-6, 1.0, 0.25, 0.5, 0.0, 0.75], dtype=F64)
    x = torch.tensor([-1.0, 2.0, -0.3, -60.0, -13.8, 0.0, float("inf"), float("nan"), float("-inf"), -0.29],
                     dtype=F64)
    for dtype in ("f32", "f16", "bf16"):
        for reduction in REDUCTIONS:
            for log_target in (False, True):
                tt = torch.log(t.abs() + 0.01) if log_target else t
                tag = "edge_{}_l{}_r{}".format(dtype, int(log_target), reduction)
                forward_case(writer, tag + "_fwd", reduction, log_target, contiguous(dtype, x), contiguous(dtype, tt),
                             dtype)
                grad = contiguous(dtype, torch.tensor([1.5], dtype=F64))
                gradient_case(writer, tag + "_bwd", BACKWARD, reduction, log_target, grad, contiguous(dtype, x),
                              contiguous(dtype, tt), dtype)
                gradient_case(writer, tag + "_tbwd", TARGET_BACKWARD, reduction, log_target, grad,
                              contiguous(dtype, x), contiguous(dtype, tt), dtype)
    # batchmean over [4, 3, 5]: the sum over 4, not over 60 (mean) or 1 (sum).
    for log_target in (False, True):
        self = contiguous("f32", uniform(gen, [4, 3, 5], -3, 0))
        target = contiguous("f32", targets(gen, [4, 3, 5], log_target))
        for reduction in REDUCTIONS:
            tag = "batchmean_l{}_r{}".format(int(log_target), reduction)
            forward_case(writer, tag + "_fwd", reduction, log_target, self, target, "f32")
            grad = contiguous("f32", uniform(gen, [], -2, 2))
            gradient_case(writer, tag + "_bwd", BACKWARD, reduction, log_target, grad, self, target, "f32")
            gradient_case(writer, tag + "_tbwd", TARGET_BACKWARD, reduction, log_target, grad, self, target, "f32")


def empty_cases(writer, gen):
    for reduction in REDUCTIONS:  # no elements: none writes nothing, mean NaN, sum 0, batchmean 0/N
        for self_shape in ([0, 3], [2, 0]):
            forward_case(writer, "empty{}_fwd_r{}".format(self_shape[0], reduction), reduction, False,
                         contiguous("f32", uniform(gen, self_shape, -1, 0)),
                         contiguous("f32", targets(gen, [self_shape[1]], False)), "f32")
        gradient_case(writer, "empty_bwd_r{}".format(reduction), BACKWARD, reduction, False,
                      contiguous("f32", uniform(gen, [], -1, 1)), contiguous("f32", uniform(gen, [0, 3], -1, 0)),
                      contiguous("f32", targets(gen, [3], False)), "f32")
        gradient_case(writer, "empty_tbwd_r{}".format(reduction), TARGET_BACKWARD, reduction, False,
                      contiguous("f32", uniform(gen, [], -1, 1)), contiguous("f32", uniform(gen, [0, 3], -1, 0)),
                      contiguous("f32", targets(gen, [1, 3], False)), "f32")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output",
                        default=str(Path(__file__).resolve().parents[2] / "tests/golden/kl_div_golden.txt"))
    args = parser.parse_args()
    gen = torch.Generator().manual_seed(28)
    writer = Writer()
    shape_cases(writer, gen)
    view_cases(writer, gen)
    edge_cases(writer, gen)
    empty_cases(writer, gen)
    header = ["# Golden cases for aclnnKlDiv, aclnnKlDivBackward and aclnnKlDivTargetBackward; generated by",
              "# tools/golden/generate_kl_div_golden.py with PyTorch {}. Do not edit.".format(torch.__version__),
              "# {} cases.".format(len(writer.names))]
    writer.write(args.output, header)


if __name__ == "__main__":
    main()
