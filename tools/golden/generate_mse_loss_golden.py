#!/usr/bin/python3
"""Generates the golden case list of aclnnMseLoss and aclnnMseLossBackward with PyTorch.

Writes tests/golden/mse_loss_golden.txt, read by tests/conformance/golden_cases_test.cpp and the
conformance kit, so the test suite needs no PyTorch. Needs Debian's python3-torch (PyTorch 1.13):

    /usr/bin/python3 tools/golden/generate_mse_loss_golden.py [--output ...]

Ops, by their word in ops/mse_loss/mse_loss_kit.cpp: `mse_loss` and `mse_loss_backward`.
Semantics: docs/ops/mse_loss.md. The inputs broadcast to each other (NumPy's two-way rules).
Each case has
- `reference_f64`: PyTorch's float64 result on the operands' values (F.mse_loss for the loss;
  for the gradient aten's mse_loss_backward where the shapes allow it, else the same formula).
- `expect_bits`: the output's whole storage after the op, for every output that is one float32
  expression per element: the loss with reduction none and the gradient. float32: PyTorch's own
  float32 result, which is the canonical expression bit for bit (checked here); 16-bit: the
  canonical expression in torch float32 on the widened inputs, rounded to out's dtype.
- `expect_ulps 1`: a reduced loss: the canonical per-element values summed in float64, divided
  by the broadcast element count for mean, rounded to out's dtype.
"""
import argparse
import math
from pathlib import Path

import torch
import torch.nn.functional as F

from golden_writer import DTYPES, Writer, contiguous, expanded, gapped, numel, out_operand, stored_after, transposed, uniform

FORWARD, BACKWARD = "mse_loss", "mse_loss_backward"
F32, F64 = torch.float32, torch.float64
REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def promote(a, b):
    return a if a == b else "f32"


def canonical_forward(x32, y32):
    d = x32 - y32
    return d * d


def canonical_backward(g32, x32, y32, norm):
    return ((x32 - y32) * torch.tensor(norm, dtype=F32)) * g32


def forward_case(writer, name, reduction, self, target, out_dtype):
    name = "mse_" + name  # case names are unique across every golden file
    x, y = self.view(), target.view()
    shape = list(torch.broadcast_shapes(x.shape, y.shape))
    x64, y64 = x.to(F64), y.to(F64)
    reference = F.mse_loss(*torch.broadcast_tensors(x64, y64), reduction=REDUCTIONS[reduction])
    values = canonical_forward(*torch.broadcast_tensors(x.to(F32), y.to(F32)))
    if self.dtype == "f32" and target.dtype == "f32" and values.numel() > 0:
        torch_f32 = F.mse_loss(*torch.broadcast_tensors(x, y), reduction="none")
        assert torch.equal(torch_f32.view(torch.int32), values.view(torch.int32)), name
    operands = {"self": self, "target": target}
    if reduction == 0:
        out = out_operand(out_dtype, shape)
        writer.case(name, FORWARD, [0], operands, "out", out, reference.flatten().tolist(),
                    expect_bits=stored_after(out, values))
        return
    out = out_operand(out_dtype, [])
    total = values.to(F64).sum()
    value = total / values.numel() if reduction == 1 else total  # an empty mean is NaN
    writer.case(name, FORWARD, [reduction], operands, "out", out, [reference.item()],
                expect_ulps=(1, stored_after(out, value.reshape([]))))


def backward_case(writer, name, reduction, grad, self, target, out_dtype):
    name = "mse_" + name
    g, x, y = grad.view(), self.view(), target.view()
    shape = list(torch.broadcast_shapes(g.shape, x.shape, y.shape))
    scale = 1.0 / x.numel() if reduction == 1 and x.numel() > 0 else 1.0
    norm = float(torch.tensor(2.0 * scale, dtype=F64).to(F32))
    g64, x64, y64 = torch.broadcast_tensors(g.to(F64), x.to(F64), y.to(F64))
    reference = g64 * 2.0 * (x64 - y64) * scale
    values = canonical_backward(*torch.broadcast_tensors(g.to(F32), x.to(F32), y.to(F32)), norm)
    if list(x.shape) == shape and list(y.shape) == shape and list(g.shape) == shape:
        aten64 = torch.ops.aten.mse_loss_backward(g.to(F64), x.to(F64), y.to(F64), reduction)
        assert torch.allclose(aten64, reference, rtol=1e-15, atol=0, equal_nan=True), name
        if self.dtype == "f32":
            aten32 = torch.ops.aten.mse_loss_backward(g, x, y, reduction)
            assert torch.equal(aten32.view(torch.int32), values.view(torch.int32)), name
    out = out_operand(out_dtype, shape)
    writer.case(name, BACKWARD, [reduction], {"gradOutput": grad, "self": self, "target": target}, "out", out,
                reference.flatten().tolist(), expect_bits=stored_after(out, values))


SHAPE_PAIRS = [  # (self, target): equal, one-way and two-way broadcasts, 0-d, rank 4
    ([5, 7], [5, 7]), ([5, 7], [7]), ([7], [5, 7]), ([5, 1], [1, 7]), ([3, 1, 5], [4, 1]), ([], [2, 3]),
    ([2, 3], []), ([], []), ([2, 1, 3, 4], [5, 1, 1]),
]


def layouts(dtype, values, gen):
    """The same values as differently laid-out views (2-d ones only)."""
    yield "contig", contiguous(dtype, values)
    if values.dim() == 2:
        yield "transposed", transposed(dtype, values)
        yield "gapped", gapped(dtype, values)
        yield "expanded", expanded(dtype, values[0].clone(), values.shape[0])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output",
                        default=str(Path(__file__).resolve().parents[2] / "tests/golden/mse_loss_golden.txt"))
    args = parser.parse_args()
    gen = torch.Generator().manual_seed(26)
    writer = Writer()
    dtype_sets = [("f32", "f32", "f32"), ("f16", "f16", "f16"), ("bf16", "bf16", "bf16"), ("f16", "bf16", "f32"),
                  ("f32", "f16", "f32"), ("bf16", "bf16", "f32"), ("f16", "f16", "f32")]
    for si, (self_shape, target_shape) in enumerate(SHAPE_PAIRS):
        for self_dtype, target_dtype, out_dtype in dtype_sets:
            for reduction in REDUCTIONS:
                self = contiguous(self_dtype, uniform(gen, self_shape, -4, 4))
                target = contiguous(target_dtype, uniform(gen, target_shape, -4, 4))
                forward_case(writer, "shapes{}_fwd_{}_{}_{}_r{}".format(si, self_dtype, target_dtype, out_dtype,
                                                                         reduction),
                             reduction, self, target, out_dtype)
            if self_dtype == target_dtype:
                for reduction in REDUCTIONS:
                    grad_shapes = []
                    for shape in ([], [1], self_shape, target_shape):
                        if shape not in grad_shapes:
                            grad_shapes.append(shape)
                    for grad_shape in grad_shapes:
                        grad = contiguous(self_dtype, uniform(gen, grad_shape, -2, 2))
                        self = contiguous(self_dtype, uniform(gen, self_shape, -4, 4))
                        target = contiguous(self_dtype, uniform(gen, target_shape, -4, 4))
                        backward_case(writer, "shapes{}_bwd_g{}_{}_{}_r{}".format(
                            si, "x".join(map(str, grad_shape)) or "0d", self_dtype, out_dtype, reduction),
                            reduction, grad, self, target, out_dtype)
    for dtype in ("f32", "f16", "bf16"):  # strided views of every operand
        for reduction in REDUCTIONS:
            for (sname, self), (tname, target) in zip(layouts(dtype, uniform(gen, [6, 9], -3, 3), gen),
                                                      reversed(list(layouts(dtype, uniform(gen, [6, 9], -3, 3),
                                                                            gen)))):
                forward_case(writer, "views_fwd_{}_{}_{}_r{}".format(sname, tname, dtype, reduction), reduction,
                             self, target, dtype)
                grad = gapped(dtype, uniform(gen, [6, 9], -2, 2))
                backward_case(writer, "views_bwd_{}_{}_{}_r{}".format(sname, tname, dtype, reduction), reduction,
                              grad, self, target, dtype)
    for reduction in REDUCTIONS:  # no elements: none writes nothing, mean NaN, sum 0
        forward_case(writer, "empty_fwd_r{}".format(reduction), reduction,
                     contiguous("f32", uniform(gen, [0, 3], -1, 1)), contiguous("f32", uniform(gen, [3], -1, 1)),
                     "f32")
        backward_case(writer, "empty_bwd_r{}".format(reduction), reduction,
                      contiguous("f32", uniform(gen, [], -1, 1)), contiguous("f32", uniform(gen, [0, 3], -1, 1)),
                      contiguous("f32", uniform(gen, [1, 3], -1, 1)), "f32")
    # The mean's divisor of the gradient is self's own count: self [3] broadcast to [4, 3].
    for reduction in REDUCTIONS:
        backward_case(writer, "divisor_self_count_bwd_r{}".format(reduction), reduction,
                      contiguous("f32", uniform(gen, [4, 3], -2, 2)), contiguous("f32", uniform(gen, [3], -4, 4)),
                      contiguous("f32", uniform(gen, [4, 3], -4, 4)), "f32")
    # Values whose squares overflow float16 and bfloat16's rounding; NaN and inf propagate.
    edge = torch.tensor([300.0, -300.0, 65504.0, float("inf"), float("nan"), 0.0, -0.0, 1e-4], dtype=F64)
    for dtype in ("f32", "f16", "bf16"):
        for reduction in REDUCTIONS:
            forward_case(writer, "edge_fwd_{}_r{}".format(dtype, reduction), reduction, contiguous(dtype, edge),
                         contiguous(dtype, torch.flip(edge, [0]) * 0.5), dtype)
            backward_case(writer, "edge_bwd_{}_r{}".format(dtype, reduction), reduction,
                          contiguous(dtype, torch.tensor([1.5], dtype=F64)), contiguous(dtype, edge),
                          contiguous(dtype, torch.flip(edge, [0]) * 0.5), dtype)
    header = ["# Golden cases for aclnnMseLoss and aclnnMseLossBackward; generated by",
              "# tools/golden/generate_mse_loss_golden.py with PyTorch {}. Do not edit.".format(torch.__version__),
              "# {} cases.".format(len(writer.names))]
    writer.write(args.output, header)


if __name__ == "__main__":
    main()
