#!/usr/bin/python3
"""Generates the golden case list of aclnnL1Loss and aclnnL1LossBackward with PyTorch.

Writes tests/golden/l1_loss_golden.txt, read by tests/conformance/golden_cases_test.cpp and the
conformance kit, so the test suite needs no PyTorch. Needs Debian's python3-torch (PyTorch 1.13):

    /usr/bin/python3 tools/golden/generate_l1_loss_golden.py [--output ...]

Ops, by their word in ops/l1_loss/l1_loss_kit.cpp: `l1_loss` and `l1_loss_backward`.
Semantics: docs/ops/l1_loss.md. The inputs broadcast to each other (NumPy's two-way rules).
Each case has
- `reference_f64`: PyTorch's float64 result on the operands' values (F.l1_loss for the loss,
  its autograd for the gradient).
- `expect_bits`: the output's whole storage after the op, for every output that is one float32
  expression per element: the loss with reduction none and the gradient. The canonical
  expression in torch float32 on the widened inputs, rounded to out's dtype. On float32 inputs
  the loss is PyTorch's float32 result bit for bit and so is the gradient for none and sum
  (checked here); the mean's gradient multiplies by (float)(1/N) as CANN's L1LossGrad does,
  where PyTorch divides by N, which may differ from it by one ulp (checked here too).
- `expect_ulps 1`: a reduced loss: the canonical per-element values summed in float64, divided
  by the broadcast element count for mean, rounded to out's dtype.
"""
import argparse
from pathlib import Path

import torch
import torch.nn.functional as F

from golden_writer import Writer, contiguous, expanded, gapped, out_operand, stored_after, transposed, uniform

FORWARD, BACKWARD = "l1_loss", "l1_loss_backward"
F32, F64 = torch.float32, torch.float64
REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def canonical_forward(x32, y32):
    return torch.abs(x32 - y32)


def canonical_sign(x, y):
    return torch.where(x > y, 1.0, torch.where(x < y, -1.0, 0.0)).to(x.dtype)


def canonical_backward(g32, x32, y32, norm):
    return canonical_sign(x32, y32) * (g32 * torch.tensor(norm, dtype=F32))


def ulps_apart(a, b):
    """The distance in float32 units of two float32 tensors of finite values."""
    ia, ib = a.view(torch.int32).to(torch.int64), b.view(torch.int32).to(torch.int64)
    ia = torch.where(ia < 0, -(ia & 0x7FFFFFFF), ia)
    ib = torch.where(ib < 0, -(ib & 0x7FFFFFFF), ib)
    return (ia - ib).abs()


def forward_case(writer, name, reduction, self, target, out_dtype):
    name = "l1_" + name  # case names are unique across every golden file
    x, y = self.view(), target.view()
    shape = list(torch.broadcast_shapes(x.shape, y.shape))
    reference = F.l1_loss(*torch.broadcast_tensors(x.to(F64), y.to(F64)), reduction=REDUCTIONS[reduction])
    values = canonical_forward(*torch.broadcast_tensors(x.to(F32), y.to(F32)))
    if self.dtype == "f32" and target.dtype == "f32" and values.numel() > 0:
        torch_f32 = F.l1_loss(*torch.broadcast_tensors(x, y), reduction="none")
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


def torch_gradient(g, x, y, reduction, dtype):
    """PyTorch's autograd gradient of l1_loss with respect to self, on the broadcast shape."""
    gb, xb, yb = torch.broadcast_tensors(g.to(dtype), x.to(dtype), y.to(dtype))
    xb = xb.clone().requires_grad_(True)
    loss = F.l1_loss(xb, yb, reduction=REDUCTIONS[reduction])
    seed = gb if reduction == 0 else gb.reshape(-1)[0]  # a reduced loss: gradOutput is one element
    (grad,) = torch.autograd.grad(loss, xb, seed)
    return grad


def backward_case(writer, name, reduction, grad, self, target, out_dtype):
    name = "l1_" + name
    g, x, y = grad.view(), self.view(), target.view()
    shape = list(torch.broadcast_shapes(g.shape, x.shape, y.shape))
    count = 1
    for d in shape:
        count *= d
    scale = 1.0 / count if reduction == 1 and count > 0 else 1.0
    norm = float(torch.tensor(scale, dtype=F64).to(F32))
    g64, x64, y64 = torch.broadcast_tensors(g.to(F64), x.to(F64), y.to(F64))
    reference = canonical_sign(x64, y64) * (g64 * scale)
    values = canonical_backward(*torch.broadcast_tensors(g.to(F32), x.to(F32), y.to(F32)), norm)
    if reduction == 0 or list(g.shape) in ([], [1]) and g.numel() == 1:
        # Autograd's gradient needs gradOutput of the loss's shape: all of B, or one element.
        if count > 0:
            assert torch.allclose(torch_gradient(g, x, y, reduction, F64), reference, rtol=1e-15, atol=0,
                                  equal_nan=True), name
        if grad.dtype == self.dtype == target.dtype == "f32" and count > 0:
            aten32 = torch_gradient(g, x, y, reduction, F32)
            finite = torch.isfinite(aten32) & torch.isfinite(values)
            if reduction == 1:
                apart = ulps_apart(aten32[finite], values[finite])
                assert apart.numel() == 0 or int(apart.max()) <= 1, name
            else:
                assert torch.equal(aten32.view(torch.int32), values.view(torch.int32)), name
    out = out_operand(out_dtype, shape)
    writer.case(name, BACKWARD, [reduction], {"gradOutput": grad, "self": self, "target": target}, "gradInput",
                out, reference.flatten().tolist(), expect_bits=stored_after(out, values))


SHAPE_PAIRS = [  # (self, target): equal, one-way and two-way broadcasts, 0-d, rank 4
    ([5, 7], [5, 7]), ([5, 7], [7]), ([7], [5, 7]), ([5, 1], [1, 7]), ([3, 1, 5], [4, 1]), ([], [2, 3]),
    ([2, 3], []), ([], []), ([2, 1, 3, 4], [5, 1, 1]),
]


def layouts(dtype, values):
    """The same values as differently laid-out views (2-d ones only)."""
    yield "contig", contiguous(dtype, values)
    if values.dim() == 2:
        yield "transposed", transposed(dtype, values)
        yield "gapped", gapped(dtype, values)
        yield "expanded", expanded(dtype, values[0].clone(), values.shape[0])


def ties(gen, shape):
    """Values on a grid of 0.5 in [-2, 2]: self == target at many elements (the gradient's 0)."""
    return torch.randint(-4, 5, shape, generator=gen).to(F64) * 0.5


def shape_cases(writer, gen):
    dtype_sets = [("f32", "f32", "f32"), ("f16", "f16", "f16"), ("bf16", "bf16", "bf16"), ("f16", "bf16", "f32"),
                  ("f32", "f16", "f32"), ("bf16", "bf16", "f32"), ("f16", "f16", "f32")]
    for si, (self_shape, target_shape) in enumerate(SHAPE_PAIRS):
        for self_dtype, target_dtype, out_dtype in dtype_sets:
            for reduction in REDUCTIONS:
                self = contiguous(self_dtype, uniform(gen, self_shape, -4, 4))
                target = contiguous(target_dtype, uniform(gen, target_shape, -4, 4))
                forward_case(writer, "shapes{}_fwd_{}_{}_{}_r{}".format(si, self_dtype, target_dtype, out_dtype,
                                                                         reduction), reduction, self, target, out_dtype)
            for reduction in REDUCTIONS:
                grad_shapes = []
                for shape in ([], [1], self_shape, target_shape):
                    if shape not in grad_shapes:
                        grad_shapes.append(shape)
                for grad_shape in grad_shapes:
                    grad = contiguous(self_dtype, uniform(gen, grad_shape, -2, 2))
                    self = contiguous(self_dtype, ties(gen, self_shape))
                    target = contiguous(target_dtype, ties(gen, target_shape))
                    backward_case(writer, "shapes{}_bwd_g{}_{}_{}_{}_r{}".format(
                        si, "x".join(map(str, grad_shape)) or "0d", self_dtype, target_dtype, out_dtype, reduction),
                        reduction, grad, self, target, out_dtype)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output",
                        default=str(Path(__file__).resolve().parents[2] / "tests/golden/l1_loss_golden.txt"))
    args = parser.parse_args()
    gen = torch.Generator().manual_seed(27)
    writer = Writer()
    shape_cases(writer, gen)
    for dtype in ("f32", "f16", "bf16"):  # strided views of every operand
        for reduction in REDUCTIONS:
            for (sname, self), (tname, target) in zip(layouts(dtype, ties(gen, [6, 9])),
                                                      reversed(list(layouts(dtype, ties(gen, [6, 9]))))):
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
    # The mean's divisor of the gradient is the broadcast count: self [3] broadcast to [4, 3].
    for reduction in REDUCTIONS:
        backward_case(writer, "divisor_broadcast_count_bwd_r{}".format(reduction), reduction,
                      contiguous("f32", uniform(gen, [4, 3], -2, 2)), contiguous("f32", uniform(gen, [3], -4, 4)),
                      contiguous("f32", uniform(gen, [4, 3], -4, 4)), "f32")
    # Differences that overflow 16-bit types, equal values (the gradient's 0, signed zeros),
    # inf and NaN (whose sign is 0 in the gradient, as both of CANN's comparisons are false).
    edge = torch.tensor([300.0, -300.0, 65504.0, float("inf"), float("nan"), 0.0, -0.0, 1e-4, 2.5, -1.0], dtype=F64)
    other = torch.tensor([-300.0, 300.0, -65504.0, float("inf"), 1.0, -0.0, 0.0, 1e-4, 2.5, float("-inf")],
                         dtype=F64)
    for dtype in ("f32", "f16", "bf16"):
        for reduction in REDUCTIONS:
            forward_case(writer, "edge_fwd_{}_r{}".format(dtype, reduction), reduction, contiguous(dtype, edge),
                         contiguous(dtype, other), dtype)
            backward_case(writer, "edge_bwd_{}_r{}".format(dtype, reduction), reduction,
                          contiguous(dtype, torch.tensor([-1.5], dtype=F64)), contiguous(dtype, edge),
                          contiguous(dtype, other), dtype)
    header = ["# Golden cases for aclnnL1Loss and aclnnL1LossBackward; generated by",
              "# tools/golden/generate_l1_loss_golden.py with PyTorch {}. Do not edit.".format(torch.__version__),
              "# {} cases.".format(len(writer.names))]
    writer.write(args.output, header)


if __name__ == "__main__":
    main()
