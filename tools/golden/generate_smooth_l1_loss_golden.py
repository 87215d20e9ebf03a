#!/usr/bin/python3
"""Generates the golden case list of aclnnSmoothL1Loss and aclnnSmoothL1LossBackward with PyTorch.

Writes tests/golden/smooth_l1_loss_golden.txt, read by tests/conformance/golden_cases_test.cpp
and the conformance kit, so the test suite needs no PyTorch. Needs Debian's python3-torch
(PyTorch 1.13):

    /usr/bin/python3 tools/golden/generate_smooth_l1_loss_golden.py [--output ...]

Ops, by their word in ops/smooth_l1_loss/smooth_l1_loss_kit.cpp: `smooth_l1_loss` and
`smooth_l1_loss_backward`; attributes: reduction, then beta as a decimal number (exact in
float32). Semantics: docs/ops/smooth_l1_loss.md. The inputs broadcast to each other. Each case has
- `reference_f64`: PyTorch's float64 result on the operands' values (F.smooth_l1_loss on the
  broadcast operands; for the gradient aten's smooth_l1_loss_backward on them).
- `expect_bits`: the output's whole storage after the op, for every output that is one float32
  expression per element: the loss with reduction none and the gradient. The canonical
  expression in torch float32 on the widened inputs, rounded to out's dtype. On float32 inputs
  the loss is PyTorch's own float32 result bit for bit, the gradient that of aten's vectorized
  loop (its scalar tail divides last, within one ulp; both checked here).
- `expect_ulps 1`: a reduced loss: the canonical per-element values summed in float64, divided
  by the broadcast element count for mean, rounded to out's dtype.
"""
import argparse
from pathlib import Path

import torch
import torch.nn.functional as F

from golden_writer import Writer, contiguous, expanded, gapped, out_operand, stored_after, transposed, uniform

FORWARD, BACKWARD = "smooth_l1_loss", "smooth_l1_loss_backward"
F32, F64 = torch.float32, torch.float64
REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def canonical_forward(x32, y32, beta):
    b = torch.tensor(beta, dtype=F32)
    z = torch.abs(x32 - y32)
    return torch.where(z < b, torch.tensor(0.5, dtype=F32) * z * z / b, z - torch.tensor(0.5, dtype=F32) * b)


def canonical_backward(g32, x32, y32, beta, norm):
    b, n = torch.tensor(beta, dtype=F32), torch.tensor(norm, dtype=F32)
    x = x32 - y32
    o = torch.where(x.abs() >= b, torch.where(x > 0, 1.0, -1.0).to(F32), x / b)
    return n * o * g32


def ulps_apart(a, b):
    """The distance in float32 units of two float32 tensors of finite values."""
    ia, ib = a.view(torch.int32).to(torch.int64), b.view(torch.int32).to(torch.int64)
    ia = torch.where(ia < 0, -(ia & 0x7FFFFFFF), ia)
    ib = torch.where(ib < 0, -(ib & 0x7FFFFFFF), ib)
    return (ia - ib).abs()


def forward_case(writer, name, reduction, beta, self, target, out_dtype):
    name = "sl1_" + name  # case names are unique across every golden file
    x, y = self.view(), target.view()
    shape = list(torch.broadcast_shapes(x.shape, y.shape))
    reference = F.smooth_l1_loss(*torch.broadcast_tensors(x.to(F64), y.to(F64)), reduction=REDUCTIONS[reduction],
                                 beta=beta)
    values = canonical_forward(*torch.broadcast_tensors(x.to(F32), y.to(F32)), beta)
    if self.dtype == "f32" and target.dtype == "f32" and values.numel() > 0:
        torch_f32 = F.smooth_l1_loss(*torch.broadcast_tensors(x, y), reduction="none", beta=beta)
        assert torch.equal(torch_f32.view(torch.int32), values.view(torch.int32)), name
    operands = {"self": self, "target": target}
    if reduction == 0:
        out = out_operand(out_dtype, shape)
        writer.case(name, FORWARD, [0, beta], operands, "result", out, reference.flatten().tolist(),
                    expect_bits=stored_after(out, values))
        return
    out = out_operand(out_dtype, [])
    total = values.to(F64).sum()
    value = total / values.numel() if reduction == 1 else total  # an empty mean is NaN
    writer.case(name, FORWARD, [reduction, beta], operands, "result", out, [reference.item()],
                expect_ulps=(1, stored_after(out, value.reshape([]))))


def backward_case(writer, name, reduction, beta, grad, self, target, out_dtype):
    name = "sl1_" + name
    g, x, y = grad.view(), self.view(), target.view()
    shape = list(torch.broadcast_shapes(g.shape, x.shape, y.shape))
    count = 1
    for d in shape:
        count *= d
    scale = 1.0 / count if reduction == 1 and count > 0 else 1.0
    norm = float(torch.tensor(scale, dtype=F64).to(F32))
    g64, x64, y64 = torch.broadcast_tensors(g.to(F64), x.to(F64), y.to(F64))
    d64 = x64 - y64
    reference = scale * torch.where(d64.abs() >= beta, torch.where(d64 > 0, 1.0, -1.0).to(F64), d64 / beta) * g64
    values = canonical_backward(*torch.broadcast_tensors(g.to(F32), x.to(F32), y.to(F32)), beta, norm)
    if count > 0:
        # aten's gradient on the broadcast operands (its mean divides by their count).
        aten64 = torch.ops.aten.smooth_l1_loss_backward(g64.contiguous(), x64.contiguous(), y64.contiguous(),
                                                        reduction, beta)
        assert torch.allclose(aten64, reference, rtol=1e-14, atol=0, equal_nan=True), name
        if grad.dtype == self.dtype == target.dtype == "f32":
            gb, xb, yb = (t.contiguous() for t in torch.broadcast_tensors(g, x, y))
            aten32 = torch.ops.aten.smooth_l1_loss_backward(gb, xb, yb, reduction, beta)
            # aten's vectorized loop is the canonical expression; its scalar tail computes
            # ((norm * x) * grad) / beta, which may be one ulp away.
            finite = torch.isfinite(aten32) & torch.isfinite(values)
            apart = ulps_apart(aten32[finite], values[finite])
            assert apart.numel() == 0 or int(apart.max()) <= 1, name
            assert torch.equal(aten32[~finite].view(torch.int32), values[~finite].view(torch.int32)), name
    out = out_operand(out_dtype, shape)
    writer.case(name, BACKWARD, [reduction, beta], {"gradOutput": grad, "self": self, "target": target}, "gradInput",
                out, reference.flatten().tolist(), expect_bits=stored_after(out, values))


SHAPE_PAIRS = [  # (self, target): equal, one-way and two-way broadcasts, 0-d, rank 4
    ([5, 7], [5, 7]), ([5, 7], [7]), ([7], [5, 7]), ([5, 1], [1, 7]), ([3, 1, 5], [4, 1]), ([], [2, 3]),
    ([2, 3], []), ([], []), ([2, 1, 3, 4], [5, 1, 1]),
]
BETAS = [1.0, 0.5, 0.0, 2.5]


def layouts(dtype, values):
    """The same values as differently laid-out views (2-d ones only)."""
    yield "contig", contiguous(dtype, values)
    if values.dim() == 2:
        yield "transposed", transposed(dtype, values)
        yield "gapped", gapped(dtype, values)
        yield "expanded", expanded(dtype, values[0].clone(), values.shape[0])


def grid(gen, shape):
    """Values on a grid of 0.25 in [-3, 3]: |self - target| is 0 or beta at many elements."""
    return torch.randint(-12, 13, shape, generator=gen).to(F64) * 0.25


def shape_cases(writer, gen):
    dtype_sets = [("f32", "f32", "f32"), ("f16", "f16", "f16"), ("bf16", "bf16", "bf16"), ("f16", "bf16", "f32"),
                  ("f32", "f16", "f32"), ("bf16", "bf16", "f32")]
    for si, (self_shape, target_shape) in enumerate(SHAPE_PAIRS):
        for di, (self_dtype, target_dtype, out_dtype) in enumerate(dtype_sets):
            beta = BETAS[(si + di) % len(BETAS)]
            tag = "{}_{}_{}_b{}".format(self_dtype, target_dtype, out_dtype, str(beta).replace(".", "p"))
            for reduction in REDUCTIONS:
                values = uniform if reduction else grid
                self = contiguous(self_dtype, values(gen, self_shape, -4, 4) if reduction else grid(gen, self_shape))
                target = contiguous(target_dtype,
                                    values(gen, target_shape, -4, 4) if reduction else grid(gen, target_shape))
                forward_case(writer, "shapes{}_fwd_{}_r{}".format(si, tag, reduction), reduction, beta, self, target,
                             out_dtype)
            for reduction in REDUCTIONS:
                grad_shapes = []
                for shape in ([], [1], self_shape, target_shape):
                    if shape not in grad_shapes:
                        grad_shapes.append(shape)
                for grad_shape in grad_shapes:
                    grad = contiguous(self_dtype, uniform(gen, grad_shape, -2, 2))
                    self = contiguous(self_dtype, grid(gen, self_shape))
                    target = contiguous(target_dtype, grid(gen, target_shape))
                    backward_case(writer, "shapes{}_bwd_g{}_{}_r{}".format(
                        si, "x".join(map(str, grad_shape)) or "0d", tag, reduction), reduction, beta, grad, self,
                        target, out_dtype)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default=str(Path(__file__).resolve().parents[2] /
                                                "tests/golden/smooth_l1_loss_golden.txt"))
    args = parser.parse_args()
    gen = torch.Generator().manual_seed(28)
    writer = Writer()
    shape_cases(writer, gen)
    for dtype in ("f32", "f16", "bf16"):  # strided views of every operand
        for reduction in REDUCTIONS:
            for (sname, self), (tname, target) in zip(layouts(dtype, grid(gen, [6, 9])),
                                                      reversed(list(layouts(dtype, grid(gen, [6, 9]))))):
                forward_case(writer, "views_fwd_{}_{}_{}_r{}".format(sname, tname, dtype, reduction), reduction, 0.5,
                             self, target, dtype)
                grad = gapped(dtype, uniform(gen, [6, 9], -2, 2))
                backward_case(writer, "views_bwd_{}_{}_{}_r{}".format(sname, tname, dtype, reduction), reduction,
                              0.5, grad, self, target, dtype)
    for reduction in REDUCTIONS:  # no elements: none writes nothing, mean NaN, sum 0
        forward_case(writer, "empty_fwd_r{}".format(reduction), reduction, 1.0,
                     contiguous("f32", uniform(gen, [0, 3], -1, 1)), contiguous("f32", uniform(gen, [3], -1, 1)),
                     "f32")
        backward_case(writer, "empty_bwd_r{}".format(reduction), reduction, 1.0,
                      contiguous("f32", uniform(gen, [], -1, 1)), contiguous("f32", uniform(gen, [0, 3], -1, 1)),
                      contiguous("f32", uniform(gen, [1, 3], -1, 1)), "f32")
    # The mean's divisor of the gradient is the broadcast count: self [3] broadcast to [4, 3].
    for reduction in REDUCTIONS:
        backward_case(writer, "divisor_broadcast_count_bwd_r{}".format(reduction), reduction, 1.0,
                      contiguous("f32", uniform(gen, [4, 3], -2, 2)), contiguous("f32", uniform(gen, [3], -4, 4)),
                      contiguous("f32", uniform(gen, [4, 3], -4, 4)), "f32")
    # |self - target| exactly beta, 0 and on either side, for every beta (0 included: the L1
    # loss, and the gradient -gradOut at self == target); values that overflow 16-bit types,
    # signed zeros, inf and NaN.
    edge = torch.tensor([300.0, -300.0, 65504.0, float("inf"), float("nan"), 0.0, -0.0, 0.75, 0.125, -2.5, 3.0,
                         0.5], dtype=F64)
    for beta in BETAS + [0.25, float("inf")]:
        other = torch.tensor([-300.0, 300.0, -65504.0, float("inf"), 1.0, -0.0, 0.0, 0.75 - beta if beta < 9 else 0.0,
                              0.125 + beta if beta < 9 else 1.0, -2.5 + beta if beta < 9 else 2.0, 3.0, 0.5 - beta / 2
                              if beta < 9 else 0.0], dtype=F64)
        btag = str(beta).replace(".", "p")
        for dtype in ("f32", "f16", "bf16"):
            for reduction in REDUCTIONS:
                forward_case(writer, "edge_fwd_{}_b{}_r{}".format(dtype, btag, reduction), reduction, beta,
                             contiguous(dtype, edge), contiguous(dtype, other), dtype)
                backward_case(writer, "edge_bwd_{}_b{}_r{}".format(dtype, btag, reduction), reduction, beta,
                              contiguous(dtype, torch.tensor([-1.5], dtype=F64)), contiguous(dtype, edge),
                              contiguous(dtype, other), dtype)
    header = ["# Golden cases for aclnnSmoothL1Loss and aclnnSmoothL1LossBackward; generated by",
              "# tools/golden/generate_smooth_l1_loss_golden.py with PyTorch {}. Do not edit.".format(
                  torch.__version__), "# {} cases.".format(len(writer.names))]
    writer.write(args.output, header)


if __name__ == "__main__":
    main()
