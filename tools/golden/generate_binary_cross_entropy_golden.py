#!/usr/bin/python3
"""Generates the golden case list of both binary cross-entropy ops with PyTorch.

Writes tests/golden/binary_cross_entropy_golden.txt, read by tests/conformance/golden_cases_test.cpp, so the
test suite needs no PyTorch. Needs Debian's python3-torch (PyTorch 1.13):

    /usr/bin/python3 tools/golden/generate_binary_cross_entropy_golden.py [--output tests/golden/binary_cross_entropy_golden.txt]

Each case gives every operand as a storage buffer (values as the dtype's bit patterns in
hex) plus a view (shape, strides and offset in elements), and the expectation:
- binary_cross_entropy_backward: `expect_bits`, the whole `out` storage after the op, where the view holds the
  canonical float32 expression (docs/ops/binary_cross_entropy.md, "Numerics") evaluated in
  float32 in that order and rounded to nearest even into out's dtype, and every other
  element keeps its initial bits; plus
  `reference_f64`, PyTorch's own float64 binary_cross_entropy_backward per view element.
- binary_cross_entropy: `reference_f64`, the float64 loss per view element (reduction none) or the
  float64 mean/sum; PyTorch's binary_cross_entropy agrees with it wherever PyTorch accepts
  the input (checked here).
"""
import argparse
import math
import random
from pathlib import Path

import torch

from golden_writer import (DTYPES, SENTINEL, Operand, Writer, contiguous, expanded, gapped, numel, out_operand,
                           probabilities, stored_after, transposed, uniform)

EPS = 1e-12


def canonical_backward(g, w, s, t, scale):
    """The canonical backward expression of docs/ops/binary_cross_entropy.md in float32,
    one rounding per operation, in its order."""
    f32 = torch.float32
    g, s, t = g.to(f32), s.to(f32), t.to(f32)
    w = torch.ones((), dtype=f32) if w is None else w.to(f32)
    numerator = g * w * (s - t)
    denominator = torch.clamp_min(s * (1 - s), torch.tensor(EPS, dtype=f32))
    return numerator / denominator * torch.tensor(scale, dtype=f32)


def forward_f64(w, s, t):
    s, t = s.to(torch.float64), t.to(torch.float64)
    w = torch.ones((), dtype=torch.float64) if w is None else w.to(torch.float64)
    return -w * (t * torch.clamp_min(torch.log(s), -100) + (1 - t) * torch.clamp_min(torch.log1p(-s), -100))


def in_domain(*tensors):
    return all(x is None or bool(torch.isfinite(x.to(torch.float64)).all()) for x in tensors)


def bce_expectation(op, reduction, operands, out):
    """(reference, expect_bits) of one BCE case."""
    s = operands["self"].view()
    t = operands["target"].view()
    w = operands["weight"].view() if operands.get("weight") is not None else None
    if op == "binary_cross_entropy_backward":
        g = operands["gradOutput"].view()
        scale = 1.0 / numel(s.shape) if reduction == 1 else 1.0
        expect_bits = stored_after(out, canonical_backward(g, w, s, t, scale))
        shape = list(s.shape)
        g64 = g.to(torch.float64).expand(shape).contiguous()
        w64 = None if w is None else w.to(torch.float64).expand(shape).contiguous()
        reference = torch.ops.aten.binary_cross_entropy_backward(
            g64, s.to(torch.float64), t.to(torch.float64).expand(shape).contiguous(), w64, reduction)
        return reference.flatten().tolist(), expect_bits
    losses = forward_f64(w, s, t)
    if in_domain(s, t, w) and bool(((s >= 0) & (s <= 1)).all()):
        torch_losses = torch.nn.functional.binary_cross_entropy(
            s.to(torch.float64), t.to(torch.float64),
            None if w is None else w.to(torch.float64).expand(s.shape), reduction="none")
        assert torch.allclose(losses, torch_losses, rtol=1e-12, atol=1e-12)
    if reduction == 0:
        return losses.flatten().tolist(), None
    total = math.fsum(losses.flatten().tolist())
    return [total / numel(s.shape) if reduction == 1 else total], None


class BceWriter(Writer):
    """Writer.case for the two BCE ops: the expectation is worked out here."""

    def case(self, name, op, reduction, operands, out):
        reference, expect_bits = bce_expectation(op, reduction, operands, out)
        super().case(name, op, [reduction], operands, "out", out, reference, expect_bits)


def backward_operands(gen, shape, dtypes, grad_shape=None, target_shape=None, weight_shape=None, weighted=True):
    g_dtype, s_dtype, t_dtype, w_dtype = dtypes
    grad_shape = shape if grad_shape is None else grad_shape
    target_shape = shape if target_shape is None else target_shape
    weight_shape = shape if weight_shape is None else weight_shape
    return {
        "gradOutput": contiguous(g_dtype, uniform(gen, grad_shape, -2, 2)),
        "self": contiguous(s_dtype, probabilities(gen, shape)),
        "target": contiguous(t_dtype, uniform(gen, target_shape, 0, 1)),
        "weight": contiguous(w_dtype, uniform(gen, weight_shape, 0, 2)) if weighted else None,
    }


def forward_operands(gen, shape, dtypes, weight_shape=None, weighted=True):
    s_dtype, t_dtype, w_dtype = dtypes
    weight_shape = shape if weight_shape is None else weight_shape
    return {
        "self": contiguous(s_dtype, probabilities(gen, shape)),
        "target": contiguous(t_dtype, uniform(gen, shape, 0, 1)),
        "weight": contiguous(w_dtype, uniform(gen, weight_shape, 0, 2)) if weighted else None,
    }


def reduced_shape(reduction, shape):
    return shape if reduction == 0 else []


def dtype_cases(writer, gen):
    names = list(DTYPES)
    picker = random.Random(5)
    for s_dtype in names:
        for out_dtype in names:
            for reduction in (0, 1, 2):
                g_dtype, t_dtype, w_dtype = (picker.choice(names) for _ in range(3))
                shape = [5, 7]
                grad_shape = shape if reduction == 0 else []
                ops = backward_operands(gen, shape, (g_dtype, s_dtype, t_dtype, w_dtype), grad_shape=grad_shape)
                writer.case("dtype_bwd_{}_{}_{}_{}_out_{}_r{}".format(g_dtype, s_dtype, t_dtype, w_dtype, out_dtype,
                                                                    reduction),
                            "binary_cross_entropy_backward", reduction, ops, out_operand(out_dtype, shape))
                ops = forward_operands(gen, shape, (s_dtype, t_dtype, w_dtype))
                writer.case("dtype_fwd_{}_{}_{}_out_{}_r{}".format(s_dtype, t_dtype, w_dtype, out_dtype, reduction),
                            "binary_cross_entropy", reduction, ops, out_operand(out_dtype, reduced_shape(reduction, shape)))
    for dtype in names:  # every operand of one dtype, no weight
        ops = backward_operands(gen, [4, 9], (dtype,) * 4, weighted=False)
        writer.case("dtype_bwd_all_{}_noweight".format(dtype), "binary_cross_entropy_backward", 0, ops, out_operand(dtype, [4, 9]))
        ops = forward_operands(gen, [4, 9], (dtype,) * 3, weighted=False)
        writer.case("dtype_fwd_all_{}_noweight".format(dtype), "binary_cross_entropy", 0, ops, out_operand(dtype, [4, 9]))


def broadcast_cases(writer, gen):
    shape = [3, 5, 7]
    patterns = [
        ("grad_scalar", dict(grad_shape=[])),
        ("grad_one", dict(grad_shape=[1])),
        ("grad_row", dict(grad_shape=[7])),
        ("grad_col", dict(grad_shape=[5, 1])),
        ("target_row", dict(target_shape=[7])),
        ("target_plane", dict(target_shape=[1, 5, 7])),
        ("weight_row", dict(weight_shape=[7])),
        ("weight_col", dict(weight_shape=[3, 1, 1])),
        ("weight_scalar", dict(weight_shape=[])),
        ("all_mixed", dict(grad_shape=[5, 1], target_shape=[3, 1, 7], weight_shape=[1, 5, 1])),
    ]
    for name, kwargs in patterns:
        for reduction in (0, 1, 2):
            for dtype in ("f32", "f16"):
                ops = backward_operands(gen, shape, (dtype,) * 4, **kwargs)
                writer.case("bcast_bwd_{}_{}_r{}".format(name, dtype, reduction), "binary_cross_entropy_backward", reduction, ops,
                            out_operand(dtype, shape))
    for name, weight_shape in (("weight_row", [7]), ("weight_col", [5, 1]), ("weight_scalar", []),
                               ("weight_plane", [1, 5, 7])):
        for reduction in (0, 1, 2):
            ops = forward_operands(gen, shape, ("f32", "f32", "bf16"), weight_shape=weight_shape)
            writer.case("bcast_fwd_{}_r{}".format(name, reduction), "binary_cross_entropy", reduction, ops,
                        out_operand("f32", reduced_shape(reduction, shape)))


def strided_cases(writer, gen):
    rows, cols = 6, 10
    for dtype in ("f32", "f16", "bf16"):
        for reduction in (0, 1, 2):
            g = uniform(gen, [rows, cols], -2, 2)
            s = probabilities(gen, [rows, cols])
            t = uniform(gen, [rows, cols], 0, 1)
            w = uniform(gen, [rows, cols], 0, 2)
            grad = contiguous(dtype, g) if reduction == 0 else contiguous(dtype, uniform(gen, [], -2, 2))
            ops = {"gradOutput": grad, "self": transposed(dtype, s), "target": gapped(dtype, t),
                   "weight": expanded(dtype, uniform(gen, [cols], 0, 2), rows)}
            writer.case("strided_bwd_transposed_self_{}_r{}".format(dtype, reduction), "binary_cross_entropy_backward", reduction, ops,
                        out_operand(dtype, [rows, cols]))
            ops = {"gradOutput": transposed(dtype, g) if reduction == 0 else grad,
                   "self": contiguous(dtype, s), "target": transposed(dtype, t), "weight": gapped(dtype, w, 3, 1)}
            writer.case("strided_bwd_gapped_out_{}_r{}".format(dtype, reduction), "binary_cross_entropy_backward", reduction, ops,
                        gapped(dtype, torch.full((rows, cols), SENTINEL, dtype=torch.float64)))
            ops = {"gradOutput": grad, "self": gapped(dtype, s, 1, 2), "target": contiguous(dtype, t),
                   "weight": None}
            writer.case("strided_bwd_transposed_out_{}_r{}".format(dtype, reduction), "binary_cross_entropy_backward", reduction, ops,
                        transposed(dtype, torch.full((rows, cols), SENTINEL, dtype=torch.float64)))
            ops = {"self": transposed(dtype, s), "target": gapped(dtype, t), "weight": expanded(dtype, w[0], rows)}
            out = (gapped(dtype, torch.full((rows, cols), SENTINEL, dtype=torch.float64)) if reduction == 0
                   else Operand(dtype, [1], torch.full((4,), SENTINEL, dtype=torch.float64), storage_shape=[4],
                                strides=[1], offset=2))
            writer.case("strided_fwd_{}_r{}".format(dtype, reduction), "binary_cross_entropy", reduction, ops, out)


def shape_cases(writer, gen):
    shapes = {"scalar": [], "one": [1], "odd": [7], "block_minus": [1023], "block_plus": [1025],
              "rows": [3, 341], "rank8": [2, 1, 2, 1, 2, 1, 2, 3]}
    for name, shape in shapes.items():
        for reduction in (0, 1, 2):
            grad_shape = shape if reduction == 0 else []
            ops = backward_operands(gen, shape, ("f32",) * 4, grad_shape=grad_shape)
            writer.case("shape_bwd_{}_r{}".format(name, reduction), "binary_cross_entropy_backward", reduction, ops,
                        out_operand("f32", shape))
            ops = forward_operands(gen, shape, ("f32",) * 3)
            writer.case("shape_fwd_{}_r{}".format(name, reduction), "binary_cross_entropy", reduction, ops,
                        out_operand("f32", reduced_shape(reduction, shape)))
    # Reductions over more elements than one reduction chunk of the CPU backend (16384).
    for dtype in ("f32", "bf16"):
        for reduction in (1, 2):
            ops = forward_operands(gen, [3, 7001], (dtype,) * 3, weighted=False)
            writer.case("shape_fwd_chunks_{}_r{}".format(dtype, reduction), "binary_cross_entropy", reduction, ops,
                        out_operand(dtype, []))
    # A [1] out for a reduced loss, as CANN samples often use.
    ops = forward_operands(gen, [4, 4], ("f32",) * 3)
    writer.case("shape_fwd_out_one_r1", "binary_cross_entropy", 1, ops, out_operand("f32", [1]))


def edge_cases(writer, gen):
    nan, inf = float("nan"), float("inf")
    selfs = [0.0, 1.0, 0.5, 1e-7, 1 - 2 ** -24, 2 ** -30, 1e-30, nan, inf, -inf, -0.5, 1.5, -0.0, 0.25]
    targets = [0.0, 1.0, 0.5, nan, 0.3]
    pairs = [(s, t) for s in selfs for t in targets]
    s = torch.tensor([p[0] for p in pairs], dtype=torch.float64)
    t = torch.tensor([p[1] for p in pairs], dtype=torch.float64)
    n = s.numel()
    grads = torch.tensor([[1.0, -0.5, 0.0, inf, nan, 2.0][i % 6] for i in range(n)], dtype=torch.float64)
    weights = torch.tensor([[1.0, 0.0, 0.5, nan, 2.0][i % 5] for i in range(n)], dtype=torch.float64)
    for dtype in ("f32", "f16", "bf16"):
        for reduction in (0, 1, 2):
            ops = {"gradOutput": contiguous(dtype, grads if reduction == 0 else torch.tensor(0.75)),
                   "self": contiguous(dtype, s), "target": contiguous(dtype, t), "weight": contiguous(dtype, weights)}
            writer.case("edge_bwd_{}_r{}".format(dtype, reduction), "binary_cross_entropy_backward", reduction, ops, out_operand(dtype, [n]))
            ops = {"gradOutput": contiguous(dtype, grads if reduction == 0 else torch.tensor(1.0)),
                   "self": contiguous(dtype, s), "target": contiguous(dtype, t), "weight": None}
            writer.case("edge_bwd_noweight_{}_r{}".format(dtype, reduction), "binary_cross_entropy_backward", reduction, ops,
                        out_operand(dtype, [n]))
        finite = torch.isfinite(s) & torch.isfinite(t)
        ops = {"self": contiguous(dtype, s), "target": contiguous(dtype, t), "weight": None}
        writer.case("edge_fwd_{}_r0".format(dtype), "binary_cross_entropy", 0, ops, out_operand(dtype, [n]))
        in_range = finite & (s >= 0) & (s <= 1)
        for reduction in (1, 2):
            ops = {"self": contiguous(dtype, s[in_range]), "target": contiguous(dtype, t[in_range]),
                   "weight": contiguous(dtype, torch.ones(int(in_range.sum())) * 0.5)}
            writer.case("edge_fwd_inrange_{}_r{}".format(dtype, reduction), "binary_cross_entropy", reduction, ops,
                        out_operand(dtype, []))
        ops = {"self": contiguous(dtype, s), "target": contiguous(dtype, t), "weight": None}
        writer.case("edge_fwd_nan_propagates_{}_r2".format(dtype), "binary_cross_entropy", 2, ops, out_operand(dtype, []))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default=str(Path(__file__).resolve().parents[2] / "tests/golden/binary_cross_entropy_golden.txt"))
    args = parser.parse_args()
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(20261202)
    writer = BceWriter()
    dtype_cases(writer, generator)
    broadcast_cases(writer, generator)
    strided_cases(writer, generator)
    shape_cases(writer, generator)
    edge_cases(writer, generator)
    header = ["# Golden cases for aclnnBinaryCrossEntropy{,Backward}; generated by",
              "# tools/golden/generate_binary_cross_entropy_golden.py with PyTorch {}. Do not edit.".format(torch.__version__),
              "# {} cases.".format(len(writer.names))]
    writer.write(args.output, header)


if __name__ == "__main__":
    main()
