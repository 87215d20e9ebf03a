#!/usr/bin/python3
"""Generates the golden case list of aclnnSoftMarginLoss and aclnnSoftMarginLossBackward with PyTorch.

Writes tests/golden/soft_margin_loss_golden.txt, read by tests/conformance/golden_cases_test.cpp and
the conformance kit, so the test suite needs no PyTorch. Needs Debian's python3-torch (PyTorch 1.13):

    /usr/bin/python3 tools/golden/generate_soft_margin_loss_golden.py [--output ...]

Ops, by their word in ops/soft_margin_loss/soft_margin_loss_kit.cpp: `soft_margin_loss` and
`soft_margin_loss_backward`. Semantics: docs/ops/soft_margin_loss.md. The inputs broadcast to each
other (NumPy's two-way rules); targets are ±1. Each case has
- `reference_f64`: the float64 result on the operands' values: log1p(exp(-y * x)) and its mean
  or sum; -y * z / (1 + z) * g, z = exp(-y * x), over the broadcast element count for mean;
  +inf and NaN where exp overflows in float32 (-y * x above ln(FLT_MAX)), as the op defines.
  Checked against PyTorch's float64 F.soft_margin_loss (whose 1.13 kernel takes log(1 + e)) and
  aten's soft_margin_loss_backward where the shapes allow.
- `expect_ulps <n>`: the output's whole storage after the op, each view element within n ulps
  of the canonical float32 expression evaluated here operation by operation in float32 (exp and
  log1p in float64 rounded once, as expf and log1pf) on the widened inputs, rounded to out's dtype (4 for float32, 1 for the 16-bit types): the
  backends' exp and log1p are their own. The loss without reduction and the gradient.
- a reduced loss: the float64 reference only.
"""
import argparse
import math
from pathlib import Path

import torch
import torch.nn.functional as F

from golden_writer import Operand, Writer, contiguous, expanded, gapped, out_operand, stored_after, transposed, uniform

FORWARD, BACKWARD = "soft_margin_loss", "soft_margin_loss_backward"
F32, F64 = torch.float32, torch.float64
REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}
F32_ULPS = 4


def exp32(t):
    """expf: exp in float64 rounded once to float32 (PyTorch's vector exp is within an ulp)."""
    return torch.exp(t.to(F64)).to(F32)


def log1p32(e):
    """log1pf: log1p in float64 rounded once to float32 (PyTorch's vector log1p overflows to inf
    for arguments above about 1e38, where log1pf is finite)."""
    return torch.log1p(e.to(F64)).to(F32)


def canonical_forward(x32, y32):
    """log1p(exp((-x) * y)) in float32, operation by operation."""
    return log1p32(exp32(torch.neg(x32) * y32))


def canonical_backward(g32, x32, y32, norm):
    """z = exp((-y) * x); (((y * z) * norm) / (z + 1)) * g, norm = (float)(-scale)."""
    z = exp32(torch.neg(y32) * x32)
    return (((y32 * z) * torch.tensor(norm, dtype=F32)) / (z + 1)) * g32


def ulps(dtype):
    return F32_ULPS if dtype == "f32" else 1


def forward_case(writer, name, reduction, self, target, out_dtype):
    name = "smargin_" + name  # case names are unique across every golden file
    x, y = self.view(), target.view()
    shape = list(torch.broadcast_shapes(x.shape, y.shape))
    x64, y64 = torch.broadcast_tensors(x.to(F64), y.to(F64))
    per_element = torch.log1p(torch.exp(-y64 * x64))
    if per_element.numel() > 0:
        aten64 = F.soft_margin_loss(x64, y64, reduction="none")
        finite = torch.isfinite(per_element)
        assert torch.allclose(aten64[finite], per_element[finite], rtol=1e-14, atol=2.0 ** -51), name  # 1.13: log(1 + e)
    values = canonical_forward(*torch.broadcast_tensors(x.to(F32), y.to(F32)))
    # Beyond -y x = ln(FLT_MAX) exp overflows in float32: the op's loss is +inf there.
    per_element = torch.where(torch.isinf(values) & torch.isfinite(per_element), math.inf, per_element)
    operands = {"self": self, "target": target}
    if reduction == 0:
        out = out_operand(out_dtype, shape)
        writer.case(name, FORWARD, [0], operands, "out", out, per_element.flatten().tolist(),
                    expect_ulps=(ulps(out_dtype), stored_after(out, values)))
        return
    out = out_operand(out_dtype, [])
    total = per_element.sum()
    value = total / per_element.numel() if reduction == 1 else total  # an empty mean is NaN
    writer.case(name, FORWARD, [reduction], operands, "out", out, [value.item()])


def backward_case(writer, name, reduction, grad, self, target, out_dtype):
    name = "smargin_" + name
    g, x, y = grad.view(), self.view(), target.view()
    shape = list(torch.broadcast_shapes(g.shape, x.shape, y.shape))
    count = math.prod(shape)
    scale = 1.0 / count if reduction == 1 and count > 0 else 1.0
    norm = float(torch.tensor(-scale, dtype=F64).to(F32))
    g64, x64, y64 = torch.broadcast_tensors(g.to(F64), x.to(F64), y.to(F64))
    z = torch.exp(-y64 * x64)
    reference = -y64 * z / (1.0 + z) * g64 * scale
    values = canonical_backward(*torch.broadcast_tensors(g.to(F32), x.to(F32), y.to(F32)), norm)
    # Where exp overflows in float32 the op's gradient is NaN (inf / inf), as PyTorch's.
    reference = torch.where(torch.isnan(values), math.nan, reference)
    if list(x.shape) == shape and list(y.shape) == shape and list(g.shape) == shape and count > 0:
        aten64 = torch.ops.aten.soft_margin_loss_backward(g.to(F64), x.to(F64), y.to(F64), reduction)
        assert torch.allclose(aten64, reference, rtol=1e-14, atol=1e-300, equal_nan=True), name
    out = out_operand(out_dtype, shape)
    writer.case(name, BACKWARD, [reduction], {"gradOutput": grad, "self": self, "target": target}, "out", out,
                reference.flatten().tolist(), expect_ulps=(ulps(out_dtype), stored_after(out, values)))


SHAPE_PAIRS = [  # (self, target): equal, one-way and two-way broadcasts, 0-d, rank 4
    ([5, 7], [5, 7]), ([5, 7], [7]), ([7], [5, 7]), ([5, 1], [1, 7]), ([3, 1, 5], [4, 1]), ([], [2, 3]),
    ([2, 3], []), ([], []), ([2, 1, 3, 4], [5, 1, 1]),
]


def signs(gen, shape):
    """±1 targets."""
    return torch.where(torch.rand(shape, generator=gen, dtype=F64) < 0.5, -1.0, 1.0).to(F64)


def layouts(dtype, values):
    """The same values as differently laid-out views (2-d ones only)."""
    yield "contig", contiguous(dtype, values)
    if values.dim() == 2:
        yield "transposed", transposed(dtype, values)
        yield "gapped", gapped(dtype, values)
        yield "expanded", expanded(dtype, values[0].clone(), values.shape[0])


def shape_cases(writer, gen):
    dtype_sets = [("f32", "f32", "f32"), ("f16", "f16", "f16"), ("bf16", "bf16", "bf16"), ("f16", "bf16", "f32"),
                  ("f32", "f16", "f32"), ("bf16", "bf16", "f32"), ("f16", "f16", "f32")]
    for si, (self_shape, target_shape) in enumerate(SHAPE_PAIRS):
        for self_dtype, target_dtype, out_dtype in dtype_sets:
            for reduction in REDUCTIONS:
                self = contiguous(self_dtype, uniform(gen, self_shape, -6, 6))
                target = contiguous(target_dtype, signs(gen, target_shape))
                forward_case(writer, "shapes{}_fwd_{}_{}_{}_r{}".format(si, self_dtype, target_dtype, out_dtype,
                                                                         reduction),
                             reduction, self, target, out_dtype)
                grad_shapes = []
                for shape in ([], [1], self_shape, target_shape):
                    if shape not in grad_shapes:
                        grad_shapes.append(shape)
                for grad_shape in grad_shapes:
                    grad = contiguous(out_dtype, uniform(gen, grad_shape, -2, 2))
                    backward_case(writer, "shapes{}_bwd_g{}_{}_{}_{}_r{}".format(
                        si, "x".join(map(str, grad_shape)) or "0d", self_dtype, target_dtype, out_dtype, reduction),
                        reduction, grad, self, target, out_dtype)


def view_cases(writer, gen):
    for dtype in ("f32", "f16", "bf16"):  # strided views of every operand
        for reduction in REDUCTIONS:
            for (sname, self), (tname, target) in zip(layouts(dtype, uniform(gen, [6, 9], -5, 5)),
                                                      reversed(list(layouts(dtype, signs(gen, [6, 9]))))):
                forward_case(writer, "views_fwd_{}_{}_{}_r{}".format(sname, tname, dtype, reduction), reduction,
                             self, target, dtype)
                grad = gapped(dtype, uniform(gen, [6, 9], -2, 2))
                backward_case(writer, "views_bwd_{}_{}_{}_r{}".format(sname, tname, dtype, reduction), reduction,
                              grad, self, target, dtype)


def edge_cases(writer, gen):
    # Margins y * x where log(1 + e) loses every digit log1p keeps (16.6 and beyond: 1 + e rounds
    # to 1 in float32), where exp overflows (above 88.72: the loss is +inf, the gradient NaN),
    # ±0, infinities and NaN.
    margins = torch.tensor([20.0, 17.0, 30.0, 60.0, 87.0, -20.0, -87.0, 88.7, -88.7, 89.0, -89.0, 100.0, -100.0,
                            0.0, -0.0, 1e-4, float("inf"), float("-inf"), float("nan"), 0.5], dtype=F64)
    y = signs(gen, list(margins.shape))
    x = margins * y
    for dtype in ("f32", "f16", "bf16"):
        for reduction in REDUCTIONS:
            forward_case(writer, "edge_fwd_{}_r{}".format(dtype, reduction), reduction, contiguous(dtype, x),
                         contiguous(dtype, y), dtype)
            backward_case(writer, "edge_bwd_{}_r{}".format(dtype, reduction), reduction,
                          contiguous(dtype, torch.tensor([1.5], dtype=F64)), contiguous(dtype, x),
                          contiguous(dtype, y), dtype)
    # Large margins only, where the mutant log(1 + exp) gives 0: a reduced loss too.
    big = torch.tensor([18.0, 20.0, 24.0, 30.0, 40.0, 50.0], dtype=F64)
    for reduction in REDUCTIONS:
        forward_case(writer, "large_margin_fwd_r{}".format(reduction), reduction, contiguous("f32", big),
                     contiguous("f32", torch.ones(6, dtype=F64)), "f32")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default=str(Path(__file__).resolve().parents[2] /
                                                "tests/golden/soft_margin_loss_golden.txt"))
    args = parser.parse_args()
    gen = torch.Generator().manual_seed(27)
    writer = Writer()
    shape_cases(writer, gen)
    view_cases(writer, gen)
    for reduction in REDUCTIONS:  # no elements: none writes nothing, mean NaN, sum 0
        forward_case(writer, "empty_fwd_r{}".format(reduction), reduction,
                     contiguous("f32", uniform(gen, [0, 3], -1, 1)), contiguous("f32", signs(gen, [3])), "f32")
        backward_case(writer, "empty_bwd_r{}".format(reduction), reduction,
                      contiguous("f32", uniform(gen, [], -1, 1)), contiguous("f32", uniform(gen, [0, 3], -1, 1)),
                      contiguous("f32", signs(gen, [1, 3])), "f32")
    # The gradient's mean divides by the broadcast count: self [3] broadcast to [4, 3].
    for reduction in REDUCTIONS:
        backward_case(writer, "divisor_broadcast_count_bwd_r{}".format(reduction), reduction,
                      contiguous("f32", uniform(gen, [4, 3], -2, 2)), contiguous("f32", uniform(gen, [3], -4, 4)),
                      contiguous("f32", signs(gen, [4, 3])), "f32")
    edge_cases(writer, gen)
    header = ["# Golden cases for aclnnSoftMarginLoss and aclnnSoftMarginLossBackward; generated by",
              "# tools/golden/generate_soft_margin_loss_golden.py with PyTorch {}. Do not edit.".format(
                  torch.__version__),
              "# {} cases.".format(len(writer.names))]
    writer.write(args.output, header)


if __name__ == "__main__":
    main()
