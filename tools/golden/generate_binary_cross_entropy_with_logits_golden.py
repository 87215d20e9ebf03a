#!/usr/bin/python3
"""Generates the golden case list of the three binary cross-entropy-with-logits ops with PyTorch.

Writes tests/golden/binary_cross_entropy_with_logits_golden.txt, read by tests/conformance/golden_cases_test.cpp,
so the test suite needs no PyTorch. Needs Debian's python3-torch (PyTorch 1.13):

    /usr/bin/python3 tools/golden/generate_binary_cross_entropy_with_logits_golden.py [--output ...]

Ops, by their word in the kit's catalog (the op folder's kit entry):
`binary_cross_entropy_with_logits` (the loss), `binary_cross_entropy_with_logits_backward`
(gradient w.r.t. self), `binary_cross_entropy_with_logits_target_backward` (w.r.t. target).
Semantics: docs/ops/binary_cross_entropy_with_logits.md. Each case has
- `reference_f64`: PyTorch's float64 result on the operands' values (the loss per view element
  or its mean/sum, the gradients through float64 autograd), with the loss's weight and posWeight
  rounded to promote(self, target) first, as the op does.
- `scale_f64`: per view element (or for the reduced loss) the sum of the magnitudes of the
  terms the float32 canonical expression rounds, |w|·(|(1-y)·x| + m + sp + 1) for the loss
  without posWeight (the 1 of 1 + e), and so on (see `scales`). Where those terms cancel,
  float32 rounding leaves an absolute error of a few float32 ulps of that magnitude, not of the
  result (a few ulps of |x| for a tiny loss): the runner allows 4·2^-23 of it against float64
  (twice that against another float32 evaluation).
- `expect_ulps <n>`: the output's whole storage after the op, each view element within n ulps
  (of out's dtype) plus that allowance. float32 outputs: PyTorch's own float32 result (the loss
  with reduction none; the gradients through float32 autograd, any reduction). 16-bit outputs:
  the canonical float32 expression evaluated here operation by operation in torch float32 on
  the widened inputs and rounded to out's dtype (PyTorch has no 16-bit CPU kernel), n = 1.
  The backends' exp and log are their own, hence ulps rather than bits.
- `expect_bits` for the edge values that every correct exp/log gives exactly (x = ±inf, ±0,
  ±100, 20, NaN): there the output must be exactly PyTorch's (SPEC sections 5-6).
"""
import argparse
import math
import random
from pathlib import Path

import torch
import torch.nn.functional as F

from golden_writer import (DTYPES, SENTINEL, Operand, Writer, contiguous, expanded, gapped, numel, out_operand,
                           stored_after, transposed, uniform)

FORWARD = "binary_cross_entropy_with_logits"
BACKWARD = "binary_cross_entropy_with_logits_backward"
TARGET_BACKWARD = "binary_cross_entropy_with_logits_target_backward"
OPS = (FORWARD, BACKWARD, TARGET_BACKWARD)
SHORT = {FORWARD: "fwd", BACKWARD: "bwd", TARGET_BACKWARD: "tbwd"}
OUTPUT = {FORWARD: "out", BACKWARD: "out", TARGET_BACKWARD: "gradTarget"}
# ulps of a float32 output against PyTorch's float32 result (beyond the cancellation allowance):
# both evaluate the same expression in the same order, with different exp/log (each within
# about 2 ulp), and the gradients' mean divides by N where the op multiplies by (float)(1/N).
F32_ULPS = 4
F32 = torch.float32
F64 = torch.float64
REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}
STATS = {}  # op: largest ulp distance of PyTorch's float32 result from the canonical expression here


def promote(a, b):
    return a if a == b else "f32"


def values64(operand):
    return None if operand is None else operand.view().to(F64)


class Inputs:
    """The operands' values as the op sees them: views widened to float64 (exactly), the loss's
    weight and posWeight rounded to promote(self, target) first."""

    def __init__(self, op, operands):
        self.x = values64(operands["self"])
        self.y = values64(operands["target"])
        self.g = values64(operands.get("gradOutput"))
        self.shape = list(self.x.shape)
        w, p = operands.get("weight"), operands.get("posWeight")
        if op == FORWARD:
            promoted = DTYPES[promote(operands["self"].dtype, operands["target"].dtype)]
            self.w = None if w is None else w.view().to(promoted).to(F64)
            self.p = None if p is None else p.view().to(promoted).to(F64)
        else:
            self.w, self.p = values64(w), values64(p)

    def full(self, t):
        return None if t is None else t.expand(self.shape)


def torch_loss(inputs, dtype, reduction, requires_grad=False):
    x = inputs.x.to(dtype).clone().requires_grad_(requires_grad)
    y = inputs.y.to(dtype).clone().requires_grad_(requires_grad)
    w = None if inputs.w is None else inputs.full(inputs.w).to(dtype)
    p = None if inputs.p is None else inputs.full(inputs.p).to(dtype)
    loss = F.binary_cross_entropy_with_logits(x, y, weight=w, pos_weight=p, reduction=REDUCTIONS[reduction])
    return x, y, loss


def torch_gradients(inputs, dtype, reduction):
    """(d/dself, d/dtarget) by PyTorch's autograd in dtype, gradOutput as the incoming gradient."""
    x, y, loss = torch_loss(inputs, dtype, reduction, requires_grad=True)
    g = inputs.g.to(dtype)
    g = g.expand(inputs.shape).contiguous() if reduction == 0 else g.reshape([])
    return torch.autograd.grad(loss, (x, y), g)


def mean_scale(inputs, reduction):
    """1/N for mean (rounded to float32 by the gradients); an empty self has nothing to scale."""
    return 1.0 / numel(inputs.shape) if reduction == 1 and numel(inputs.shape) > 0 else 1.0


def canonical(op, inputs, reduction):
    """The op's canonical float32 expression (docs/ops/binary_cross_entropy_with_logits.md,
    "Math"), one torch float32 operation per step, per element (the loss unreduced)."""
    x, y = inputs.x.to(F32), inputs.y.to(F32)
    w = None if inputs.w is None else inputs.w.to(F32)
    p = None if inputs.p is None else inputs.p.to(F32)
    one = torch.ones((), dtype=F32)
    if op == FORWARD:
        m = torch.clamp_min(-x, 0)
        sp = torch.log(one + torch.exp(-torch.abs(x)))
        if p is None:
            loss = ((one - y) * x + m) + sp
        else:
            loss = (one - y) * x + ((p - one) * y + one) * (sp + m)
        return loss if w is None else loss * w
    g = inputs.g.to(F32)
    if op == BACKWARD:
        s = one / (one + torch.exp(-x))
        if p is None:
            r = s - y
        else:
            t = p * y
            r = ((t + one) - y) * s - t
    else:
        def log_sigmoid(z):
            return torch.clamp_max(z, 0) - torch.log1p(torch.exp(-torch.abs(z)))
        r = -x if p is None else log_sigmoid(-x) - p * log_sigmoid(x)
        r = r.expand(inputs.shape)
    r = r * g
    if w is not None:
        r = r * w
    if reduction == 1:
        r = r * torch.tensor(mean_scale(inputs, reduction), dtype=F32)
    return r.expand(inputs.shape)


def scales(op, inputs, reduction):
    """Per element, the sum of the magnitudes of the terms the canonical expression adds (times
    the factors it multiplies by afterwards); non-finite where an input is, written as 0."""
    x, y = inputs.full(inputs.x), inputs.full(inputs.y)
    w = torch.ones((), dtype=F64) if inputs.w is None else inputs.w
    p = inputs.p
    if op == FORWARD:
        m = torch.clamp_min(-x, 0)
        sp = torch.log1p(torch.exp(-torch.abs(x)))
        # 1 + e, rounded to float32 before its log, is a term of magnitude 1: where e is below
        # 2^-24 the loss loses all of sp (x = 20, y = 1 gives 0 for 2.1e-9), as PyTorch's does.
        if p is None:
            terms = ((1 - y) * x).abs() + m + sp + 1
        else:
            terms = ((1 - y) * x).abs() + (((p - 1) * y).abs() + 1) * (sp + m + 1)
        magnitude = (w.abs() * terms).expand(inputs.shape)
        if reduction != 0:
            magnitude = magnitude.sum().reshape([1]) / (numel(inputs.shape) if reduction == 1 else 1)
    else:
        factor = (inputs.g * w).abs() * mean_scale(inputs, reduction)
        if op == BACKWARD:
            s = torch.sigmoid(x)
            if p is None:
                terms = s + y.abs()
            else:
                t = (p * y).abs()
                terms = (t + 1 + y.abs()) * s + t
        elif p is None:
            terms = x.abs()
        else:
            terms = F.logsigmoid(-x).abs() + (p * F.logsigmoid(x)).abs()
        magnitude = (factor * terms).expand(inputs.shape)
    magnitude = torch.where(torch.isfinite(magnitude), magnitude, torch.zeros((), dtype=F64))
    return magnitude.flatten().tolist()


def expectation(op, reduction, operands, out, exact=False):
    """(reference, scale, expect_bits, expect_ulps) of one case."""
    inputs = Inputs(op, operands)
    empty = numel(inputs.shape) == 0
    canonical_values = canonical(op, inputs, reduction)
    if op == FORWARD:
        _, _, reference = torch_loss(inputs, F64, reduction)
        if reduction == 0:
            torch32 = torch_loss(inputs, F32, 0)[2].detach() if out.dtype == "f32" else None
        else:
            torch32 = None
    else:
        grads64 = torch_gradients(inputs, F64, reduction) if not empty else (inputs.x, inputs.x)
        reference = grads64[0 if op == BACKWARD else 1]
        if out.dtype == "f32" and not empty:
            torch32 = torch_gradients(inputs, F32, reduction)[0 if op == BACKWARD else 1]
        else:
            torch32 = None
    reference = reference.detach().flatten().tolist()
    if op == FORWARD and reduction != 0 and empty:
        reference = [math.nan if reduction == 1 else 0.0]
    scale = scales(op, inputs, reduction) if not empty else ([0.0] if op == FORWARD and reduction != 0 else [])
    check_reference(op, inputs, reduction, reference, scale)
    if op == FORWARD and reduction != 0:
        return reference, scale, None, None
    expected = torch32 if torch32 is not None else canonical_values
    if torch32 is not None:
        check_canonical(torch32, canonical_values, op, reduction, exact)
    after = stored_after(out, expected)
    if exact:
        return reference, scale, after, None
    return reference, scale, None, (F32_ULPS if out.dtype == "f32" else 1, after)


def check_reference(op, inputs, reduction, reference, scale):
    """PyTorch's float64 result against the stable float64 formulas (the C++ reference)."""
    if numel(inputs.shape) == 0:
        return
    x, y = inputs.full(inputs.x), inputs.full(inputs.y)
    w = torch.ones((), dtype=F64) if inputs.w is None else inputs.full(inputs.w)
    p = torch.ones((), dtype=F64) if inputs.p is None else inputs.full(inputs.p)
    softplus_minus_x = torch.clamp_min(-x, 0) + torch.log1p(torch.exp(-torch.abs(x)))
    if op == FORWARD:
        mine = w * ((1 - y) * x + (1 + (p - 1) * y) * softplus_minus_x)
        if reduction != 0:
            mine = mine.sum().reshape([1]) / (numel(inputs.shape) if reduction == 1 else 1)
    else:
        g = inputs.full(inputs.g) * mean_scale(inputs, reduction)
        if op == BACKWARD:
            mine = g * w * ((1 + (p - 1) * y) * torch.sigmoid(x) - p * y)
        else:
            mine = g * w * (-x + (p - 1) * softplus_minus_x)
            mine = torch.where(torch.isfinite(x), mine, torch.tensor(reference, dtype=F64).reshape(mine.shape))
    mine = mine.flatten()
    theirs = torch.tensor(reference, dtype=F64)
    both = torch.isfinite(mine) & torch.isfinite(theirs)
    assert bool((torch.isnan(mine) == torch.isnan(theirs)).all()), (op, mine, theirs)
    # PyTorch takes log(1 + e) where the stable form takes log1p(e): up to an ulp of 1 in float64
    # per unit of |w|·(1 + (p - 1)·y) (at most 8 here).
    tolerance = 1e-12 * (theirs.abs() + torch.tensor(scale, dtype=F64)) + 8 * 2.0 ** -52
    assert bool(((mine - theirs).abs()[both] <= tolerance[both]).all()), (op, mine, theirs)


def ordered(bits):
    return torch.where(bits < 0, -(bits & 0x7fffffff), bits)


def check_canonical(torch32, canonical_values, op, reduction, exact):
    """PyTorch's float32 result is the canonical expression evaluated here: bit for bit for the
    edge values, elsewhere within 2 ulps (PyTorch's loops take a scalar exp/log for the tail of
    a vector loop, its mean divides by N) where no terms cancel."""
    a = torch32.detach().contiguous().flatten()
    b = canonical_values.detach().contiguous().flatten()
    same = (a.view(torch.int32) == b.view(torch.int32)) | (torch.isnan(a) & torch.isnan(b))
    if exact:
        assert bool(same.all()), (op, reduction, a[~same], b[~same])
        return
    finite = torch.isfinite(a) & torch.isfinite(b)
    distance = (ordered(a.view(torch.int32).to(torch.int64)) - ordered(b.view(torch.int32).to(torch.int64))).abs()
    STATS[op] = max(STATS.get(op, 0), int(distance[finite].max()) if bool(finite.any()) else 0)


class LogitsWriter(Writer):
    def case(self, name, op, reduction, operands, out, exact=False):
        reference, scale, expect_bits, expect_ulps = expectation(op, reduction, operands, out, exact)
        super().case("logits_" + name, op, [reduction], operands, OUTPUT[op], out, reference, expect_bits,
                     expect_ulps=expect_ulps, scale=scale)


def logits(gen, shape, low=-6.0, high=6.0):
    return uniform(gen, shape, low, high)


def operands_for(op, gen, shape, dtypes, reduction, weight_shape=None, pos_shape=None, grad_shape=None,
                 weighted=True, positive=True):
    """Contiguous operands of op. dtypes: (self, target, weight, posWeight, gradOutput)."""
    s_dtype, t_dtype, w_dtype, p_dtype, g_dtype = dtypes
    operands = {}
    if op != FORWARD:
        grad_shape = (shape if reduction == 0 else []) if grad_shape is None else grad_shape
        operands["gradOutput"] = contiguous(g_dtype, uniform(gen, grad_shape, -2, 2))
    operands["self"] = contiguous(s_dtype, logits(gen, shape))
    operands["target"] = contiguous(t_dtype, uniform(gen, shape, 0, 1))
    weight_shape = shape if weight_shape is None else weight_shape
    pos_shape = shape if pos_shape is None else pos_shape
    operands["weight"] = contiguous(w_dtype, uniform(gen, weight_shape, 0, 2)) if weighted else None
    operands["posWeight"] = contiguous(p_dtype, uniform(gen, pos_shape, 0.25, 4)) if positive else None
    return operands


def out_for(op, dtype, shape, reduction):
    return out_operand(dtype, shape if op != FORWARD or reduction == 0 else [])


def dtype_cases(writer, gen):
    names = list(DTYPES)
    picker = random.Random(7)
    for op in OPS:
        for s_dtype in names:
            for t_dtype in names:
                for reduction in REDUCTIONS:
                    w_dtype, p_dtype, g_dtype = (picker.choice(names) for _ in range(3))
                    weighted, positive = picker.random() < 0.7, picker.random() < 0.7
                    ops = operands_for(op, gen, [5, 7], (s_dtype, t_dtype, w_dtype, p_dtype, g_dtype), reduction,
                                       pos_shape=[7], weighted=weighted, positive=positive)
                    name = "dtype_{}_{}_{}_w{}_p{}_r{}".format(SHORT[op], s_dtype, t_dtype,
                                                               w_dtype if weighted else "none",
                                                               p_dtype if positive else "none", reduction)
                    writer.case(name, op, reduction, ops, out_for(op, t_dtype, [5, 7], reduction))
        for dtype in names:  # every operand of one dtype, no weight, no posWeight
            ops = operands_for(op, gen, [4, 9], (dtype,) * 5, 0, weighted=False, positive=False)
            writer.case("dtype_{}_all_{}_plain".format(SHORT[op], dtype), op, 0, ops, out_for(op, dtype, [4, 9], 0))
    # The loss rounds weight and posWeight to promote(self, target) before widening: weights
    # with more digits than the 16-bit types hold.
    for s_dtype, w_dtype in (("f16", "f32"), ("bf16", "f32"), ("bf16", "f16"), ("f16", "bf16")):
        for reduction in REDUCTIONS:
            ops = operands_for(FORWARD, gen, [6, 11], (s_dtype, s_dtype, w_dtype, w_dtype, s_dtype), reduction,
                               pos_shape=[11])
            ops["weight"] = contiguous(w_dtype, 1 + uniform(gen, [6, 11], 0, 1) * 2 ** -9)
            writer.case("dtype_fwd_rounded_weights_{}_{}_r{}".format(s_dtype, w_dtype, reduction), FORWARD,
                        reduction, ops, out_for(FORWARD, s_dtype, [6, 11], reduction))


def broadcast_cases(writer, gen):
    shape = [3, 5, 7]
    # weight shape, posWeight shape, gradOutput shape (none) for each pattern
    patterns = [
        ("pos_row", [7], [7], [7]),
        ("pos_row_noweight", None, [7], [5, 1]),
        ("pos_plane", [], [5, 7], []),
        ("pos_col", [3, 1, 1], [5, 1], [1]),
        ("pos_one", [1, 5, 7], [1], [1, 5, 7]),
        ("pos_scalar", [5, 1], [], [3, 1, 7]),
        ("weight_only_row", [7], None, [7]),
        ("weight_only_scalar", [], None, []),
    ]
    for op in OPS:
        for name, w_shape, p_shape, g_shape in patterns:
            for reduction in REDUCTIONS:
                for dtype in ("f16",) if reduction == 1 else ("f32",):
                    ops = operands_for(op, gen, shape, (dtype,) * 5, reduction, weight_shape=w_shape or [],
                                       pos_shape=p_shape or [], grad_shape=g_shape if reduction == 0 else None,
                                       weighted=w_shape is not None, positive=p_shape is not None)
                    writer.case("bcast_{}_{}_{}_r{}".format(SHORT[op], name, dtype, reduction), op, reduction, ops,
                                out_for(op, dtype, shape, reduction))
    # The usual multi-label use: posWeight [C] against [N, C], reduced gradOutput [1].
    for op in OPS:
        for reduction in REDUCTIONS:
            ops = operands_for(op, gen, [16, 10], ("f32",) * 5, reduction, weight_shape=[10], pos_shape=[10],
                               grad_shape=[1] if reduction != 0 else [16, 10])
            writer.case("bcast_{}_multilabel_r{}".format(SHORT[op], reduction), op, reduction, ops,
                        out_for(op, "f32", [16, 10], reduction))


def strided_cases(writer, gen):
    rows, cols = 6, 10
    sentinel = torch.full((rows, cols), SENTINEL, dtype=F64)
    for op in OPS:
        for dtype in ("f32", "f16", "bf16"):
            for reduction in REDUCTIONS:
                x, y = logits(gen, [rows, cols]), uniform(gen, [rows, cols], 0, 1)
                w, p = uniform(gen, [rows, cols], 0, 2), uniform(gen, [rows, cols], 0.25, 4)
                g = uniform(gen, [rows, cols], -2, 2)
                grad = contiguous(dtype, uniform(gen, [], -2, 2)) if reduction != 0 else None
                # transposed self, gapped target, expanded weight and posWeight, gapped out
                ops = {} if op == FORWARD else {"gradOutput": grad or transposed(dtype, g)}
                ops.update({"self": transposed(dtype, x), "target": gapped(dtype, y),
                            "weight": expanded(dtype, w[0], rows), "posWeight": expanded(dtype, p[1], rows)})
                if op == FORWARD and reduction != 0:
                    out = Operand(dtype, [1], torch.full((4,), SENTINEL, dtype=F64), storage_shape=[4],
                                  strides=[1], offset=2)
                else:
                    out = gapped(dtype, sentinel)
                writer.case("strided_{}_gapped_out_{}_r{}".format(SHORT[op], dtype, reduction), op, reduction, ops,
                            out)
                # gapped self with an offset, transposed target, weight and posWeight, transposed out
                ops = {} if op == FORWARD else {"gradOutput": grad or gapped(dtype, g, 3, 1)}
                ops.update({"self": gapped(dtype, x, 1, 2), "target": transposed(dtype, y),
                            "weight": transposed(dtype, w), "posWeight": gapped(dtype, p, 2, 5)})
                out = out_operand(dtype, []) if op == FORWARD and reduction != 0 else transposed(dtype, sentinel)
                writer.case("strided_{}_transposed_out_{}_r{}".format(SHORT[op], dtype, reduction), op, reduction,
                            ops, out)


def shape_cases(writer, gen):
    small = {"scalar": [], "one": [1], "odd": [7], "rank3": [2, 3, 4], "rank5": [2, 1, 3, 1, 2],
             "rank8": [2, 1, 2, 1, 2, 1, 2, 3]}
    # Around the backends' 1024-element blocks, and rows that are no multiple of a vector:
    # the loss with every reduction, the gradients with one each (the file stays small).
    large = {"block_minus": ([1023], (0, 1, 2), (1,)), "block_plus": ([1025], (0, 1, 2), (0,)),
             "rows": ([3, 341], (0, 1, 2), (2,))}
    plans = [(name, shape, REDUCTIONS, REDUCTIONS) for name, shape in small.items()]
    plans += [(name, shape, loss, grads) for name, (shape, loss, grads) in large.items()]
    for name, shape, loss_reductions, gradient_reductions in plans:
        for op in OPS:
            for reduction in loss_reductions if op == FORWARD else gradient_reductions:
                last = shape[-1:] if shape else []
                ops = operands_for(op, gen, shape, ("f32",) * 5, reduction, pos_shape=last,
                                   weighted=reduction != 1, positive=reduction != 2)
                writer.case("shape_{}_{}_r{}".format(SHORT[op], name, reduction), op, reduction, ops,
                            out_for(op, "f32", shape, reduction))
    # Reductions over more elements than one reduction chunk of the CPU backend (16384).
    ops = operands_for(FORWARD, gen, [2, 8500], ("f32",) * 5, 1, pos_shape=[8500], weighted=False)
    writer.case("shape_fwd_chunks_f32_r1", FORWARD, 1, ops, out_operand("f32", []))
    ops = operands_for(FORWARD, gen, [2, 8500], ("bf16",) * 5, 2, weighted=False, positive=False)
    writer.case("shape_fwd_chunks_bf16_r2", FORWARD, 2, ops, out_operand("bf16", [1]))
    # A [1] out for a reduced loss, as CANN samples often use.
    ops = operands_for(FORWARD, gen, [4, 4], ("f32",) * 5, 1)
    writer.case("shape_fwd_out_one_r1", FORWARD, 1, ops, out_operand("f32", [1]))


def empty_cases(writer, gen):
    """An empty self: the loss's mean is NaN and its sum 0, written; otherwise nothing is written."""
    for dtype in ("f32", "f16", "bf16"):
        for reduction in REDUCTIONS:
            for op in OPS:
                ops = operands_for(op, gen, [0, 5], (dtype,) * 5, reduction, weight_shape=[5], pos_shape=[5],
                                   grad_shape=[] if op != FORWARD else None)
                writer.case("empty_{}_{}_r{}".format(SHORT[op], dtype, reduction), op, reduction, ops,
                            out_for(op, dtype, [0, 5], reduction))
    # [1] out, no optional operands, and a three-dimensional empty self
    for reduction in (1, 2):
        ops = operands_for(FORWARD, gen, [2, 0, 3], ("f32",) * 5, reduction, weighted=False, positive=False)
        writer.case("empty_fwd_rank3_out_one_r{}".format(reduction), FORWARD, reduction, ops,
                    out_operand("f32", [1]))
    for op in (BACKWARD, TARGET_BACKWARD):
        ops = operands_for(op, gen, [2, 0, 3], ("f32",) * 5, 0, weighted=False, positive=False)
        writer.case("empty_{}_rank3_r0".format(SHORT[op]), op, 0, ops, out_operand("f32", [2, 0, 3]))


NAN, INF = float("nan"), float("inf")
# SPEC sections 5 and 6: every correct exp and log gives these exactly (exp(-|x|) is 1 or
# below 2^-24, so 1 + e is 2 or 1; exp(-x) of -100 overflows to inf).
EXACT_X = [-INF, INF, -0.0, 0.0, 100.0, -100.0, 20.0, NAN]
EXACT_Y = [0.0, 1.0, 0.5, NAN]
NEAR_X = [1e-3, -1e-3, 0.5, -0.5, 1.0, -1.0, 5.0, -5.0, 17.0, -17.0, -20.0, 30.0, -30.0, 80.0, -80.0, 88.0,
          -88.0, 89.0, -89.0, 1e4, -1e4, 1e30, -1e30, 1e-30, -1e-30]
NEAR_Y = [0.0, 1.0, 0.25, 0.999]


def grid(xs, ys):
    pairs = [(x, y) for x in xs for y in ys]
    return (torch.tensor([p[0] for p in pairs], dtype=F64), torch.tensor([p[1] for p in pairs], dtype=F64))


def cycled(values, n):
    return torch.tensor([values[i % len(values)] for i in range(n)], dtype=F64)


def edge_cases(writer, gen):
    for op in OPS:
        xs = EXACT_X
        if op == TARGET_BACKWARD:
            xs = [x for x in EXACT_X if x != 0]  # log1p(1) is not exact in every log1p: the near set has 0
        x, y = grid(xs, EXACT_Y)
        n = x.numel()
        for dtype in ("f32", "f16", "bf16"):
            for positive in (False, True):
                tag = "pos" if positive else "nopos"
                # SPEC's cases: w = 1 (absent), g = 1; posWeight 3 where it is present
                ops = {} if op == FORWARD else {"gradOutput": contiguous(dtype, torch.ones(n, dtype=F64))}
                ops.update({"self": contiguous(dtype, x), "target": contiguous(dtype, y), "weight": None,
                            "posWeight": contiguous(dtype, torch.tensor(3.0, dtype=F64)) if positive else None})
                writer.case("edge_exact_{}_{}_{}_r0".format(SHORT[op], tag, dtype), op, 0, ops,
                            out_operand(dtype, [n]), exact=True)
                # other weights, posWeights and gradients, still exact
                ops = {} if op == FORWARD else {"gradOutput": contiguous(dtype, cycled([1.0, -0.5, 2.0], n))}
                ops.update({"self": contiguous(dtype, x), "target": contiguous(dtype, y),
                            "weight": contiguous(dtype, cycled([1.0, 2.0, 0.5, 0.0, 1.0], n)),
                            "posWeight": contiguous(dtype, cycled([3.0, 0.5, 2.0], n)) if positive else None})
                reductions = (0,) if op == FORWARD else (0, 2)
                for reduction in reductions:
                    if reduction != 0:
                        ops["gradOutput"] = contiguous(dtype, torch.tensor(0.75, dtype=F64))
                    writer.case("edge_exact_weighted_{}_{}_{}_r{}".format(SHORT[op], tag, dtype, reduction), op,
                                reduction, ops, out_operand(dtype, [n]), exact=True)
                if op == FORWARD:  # NaN in the set: the mean and the sum are NaN
                    for reduction in (1, 2):
                        writer.case("edge_nan_propagates_fwd_{}_{}_r{}".format(tag, dtype, reduction), op,
                                    reduction, ops, out_operand(dtype, []))
    # Values where exp and log round: within ulps.
    x, y = grid(NEAR_X + [0.0, -0.0], NEAR_Y)
    n = x.numel()
    for op in OPS:
        for dtype in ("f32", "f16", "bf16"):
            for positive in (False, True):
                tag = "pos" if positive else "nopos"
                for reduction in REDUCTIONS if dtype == "f32" else (0,):
                    ops = {} if op == FORWARD else {
                        "gradOutput": contiguous(dtype, cycled([1.0, -0.5, 2.0], n) if reduction == 0
                                                 else torch.tensor(-1.25, dtype=F64))}
                    ops.update({"self": contiguous(dtype, x), "target": contiguous(dtype, y),
                                "weight": contiguous(dtype, cycled([1.0, 2.0, 0.5, 0.25], n)),
                                "posWeight": contiguous(dtype, cycled([3.0, 0.5, 2.0], n)) if positive else None})
                    writer.case("edge_near_{}_{}_{}_r{}".format(SHORT[op], tag, dtype, reduction), op, reduction,
                                ops, out_for(op, dtype, [n], reduction))


def cancel_cases(writer, gen):
    """Large |x| with y at or next to the label that makes the loss tiny: the terms of the float32
    expression cancel and only the absolute allowance (a few ulps of |x|) holds."""
    count = 120
    x = torch.cat([uniform(gen, [count // 2], 10, 90), uniform(gen, [count // 2], -90, -10)])
    near_one = 1 - torch.tensor([[0.0, 1e-6, 1e-4, 1e-3][i % 4] for i in range(count // 2)], dtype=F64)
    near_zero = torch.tensor([[0.0, 1e-6, 1e-4, 1e-3][i % 4] for i in range(count // 2)], dtype=F64)
    y = torch.cat([near_one, near_zero])
    for op in OPS:
        for positive in (False, True):
            tag = "pos" if positive else "nopos"
            for reduction in REDUCTIONS:
                ops = {} if op == FORWARD else {
                    "gradOutput": contiguous("f32", uniform(gen, [count] if reduction == 0 else [], -2, 2))}
                ops.update({"self": contiguous("f32", x), "target": contiguous("f32", y),
                            "weight": contiguous("f32", uniform(gen, [count], 0.5, 2)),
                            "posWeight": contiguous("f32", uniform(gen, [count], 0.25, 4)) if positive else None})
                writer.case("cancel_{}_{}_r{}".format(SHORT[op], tag, reduction), op, reduction, ops,
                            out_for(op, "f32", [count], reduction))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output",
                        default=str(Path(__file__).resolve().parents[2] / "tests/golden/binary_cross_entropy_with_logits_golden.txt"))
    args = parser.parse_args()
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(20261203)
    writer = LogitsWriter()
    dtype_cases(writer, generator)
    broadcast_cases(writer, generator)
    strided_cases(writer, generator)
    shape_cases(writer, generator)
    empty_cases(writer, generator)
    edge_cases(writer, generator)
    cancel_cases(writer, generator)
    header = ["# Golden cases for aclnnBinaryCrossEntropyWithLogits{,Backward,TargetBackward}; generated by",
              "# tools/golden/generate_binary_cross_entropy_with_logits_golden.py with PyTorch {}. Do not edit.".format(
                  torch.__version__),
              "# {} cases.".format(len(writer.names))]
    writer.write(args.output, header)
    for op, ulps in sorted(STATS.items()):
        print("{}: PyTorch float32 vs the canonical expression in torch float32: at most {} ulps".format(op, ulps))


if __name__ == "__main__":
    main()
