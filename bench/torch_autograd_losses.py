#!/usr/bin/env python3
"""nnplug.torch's losses against torch.nn.functional's, forward + backward through
autograd on the same tensors, beside the machine's memory bandwidth (a STREAM triad), all
measured in one process, interleaved, best of several runs. Not a test: it asserts nothing.

    PYTHONPATH=build/lib/python3.11/dist-packages python3 bench/torch_autograd_losses.py

Columns: the best time of one forward + backward (reduction mean) through autograd; GB/s
counts the bytes the two passes must move (forward: input, target; backward: input,
target, gradient written), so `of triad` is the share of the triad's bandwidth; `ops
alone` is nnplug's two ops called directly into a gradient buffer made once (no autograd,
no fresh gradient whose page faults both autograd columns pay); `vs torch` is torch's time
over nnplug's, both through autograd. torch 1.13 has no float16/bfloat16 binary_cross_entropy
on the CPU, no float16 binary_cross_entropy_with_logits, no bfloat16 mse_loss and no float16
mse_loss gradient ("n/a").
"""

import argparse
import os
import time
import warnings

import torch
import torch.nn.functional as F

import nnplug
import nnplug.torch as nt
from nnplug import _nnplug

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
LOSSES = {
    "bce": (nt.binary_cross_entropy, F.binary_cross_entropy),
    "bce_with_logits": (nt.binary_cross_entropy_with_logits, F.binary_cross_entropy_with_logits),
    "mse": (nt.mse_loss, F.mse_loss),
}
# The aclnn ops of each loss with the operands after target left out (weight, pos_weight).
OPS = {
    "bce": ("aclnnBinaryCrossEntropy", "aclnnBinaryCrossEntropyBackward", 1),
    "bce_with_logits": ("aclnnBinaryCrossEntropyWithLogits", "aclnnBinaryCrossEntropyWithLogitsBackward", 2),
    "mse": ("aclnnMseLoss", "aclnnMseLossBackward", 0),
}
ARRAYS_MOVED = 5  # forward reads 2, backward reads 2 and writes 1


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,4,16,64", help="element counts in Mi (2^20), comma-separated")
    parser.add_argument("--dtypes", default="float32,float16,bfloat16")
    parser.add_argument("--losses", default="bce,bce_with_logits,mse")
    parser.add_argument("--repeats", type=int, default=7, help="runs of each; the best counts")

    parser.add_argument("--threads", type=int, default=os.cpu_count(),
                        help="torch's intra-op threads (default: every core, as cpu_tbb's default config)")
    parser.add_argument("--backend", default="cpu_tbb")
    return parser.parse_args()


def forward_backward(loss_function, x, y):
    def run():
        loss = loss_function(x, y)
        torch.autograd.grad(loss, [x])
    return run


def ops_alone(loss, x, y):
    """The two ops called directly, the gradient into a buffer made once: no autograd, no
    allocation (whose first-touch page faults the autograd columns pay, torch's too)."""
    forward, backward, absent = OPS[loss]
    x = x.detach()
    loss_out, grad_in, grad_out = torch.empty((), dtype=x.dtype), torch.ones((), dtype=x.dtype), torch.empty_like(x)
    grad_out.fill_(0)
    operands = [nt._describe(x, "input"), nt._describe(y, "target")] + [None] * absent
    gradient = [nt._describe(grad_in, "grad_output")] + operands

    def run():
        _nnplug.run(forward, operands, 1, nt._describe(loss_out, "out"))
        _nnplug.run(backward, gradient, 1, nt._describe(grad_out, "out"))
    return run


def triad(n, threads):
    """a = b + s * c, two reads and one write of float32 (STREAM's count: 12 bytes per element),
    on `threads` of torch's intra-op threads."""
    a, b, c = torch.empty(n), torch.rand(n), torch.rand(n)
    others = torch.get_num_threads()

    def run():
        torch.set_num_threads(threads)
        torch.add(b, c, alpha=3.0, out=a)
        torch.set_num_threads(others)
    return run


def best_times(runs, repeats):
    """Best time of each run, the runs interleaved so that the machine's drift hits all alike."""
    for run in runs.values():
        run()  # warm-up: first-touch page faults, thread start
    best = {name: float("inf") for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            start = time.perf_counter()
            run()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def inputs(loss, n, dtype):
    g = torch.Generator().manual_seed(0)
    if loss == "bce":
        x = torch.rand(n, generator=g) * 0.98 + 0.01
    else:
        x = torch.randn(n, generator=g) * 3
    return x.to(dtype).requires_grad_(True), torch.rand(n, generator=g).to(dtype)


def torch_supports(function, x, y):
    warnings.filterwarnings("ignore", message="Applying the CPU mse kernel on half")  # then refused
    try:
        forward_backward(function, x[:8].detach().requires_grad_(True), y[:8])()
        return True
    except RuntimeError:
        return False


def main():
    args = parse_arguments()
    torch.set_num_threads(args.threads)
    nnplug.init(backend=args.backend)
    print(f"nnplug backend {nnplug.backend()}, torch {torch.__version__} with {torch.get_num_threads()} threads, "
          f"best of {args.repeats}")
    print(f"| loss | dtype | elements | triad GB/s | nnplug ms | nnplug GB/s | of triad | ops alone ms | of triad "
          f"| torch ms | torch GB/s | of triad | vs torch |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for size in (int(s) for s in args.sizes.split(",")):
        n = size << 20
        for loss in args.losses.split(","):
            ours, theirs = LOSSES[loss]
            for dtype_name in args.dtypes.split(","):
                x, y = inputs(loss, n, DTYPES[dtype_name])
                # On a shared machine a thread of torch's OpenMP team may wait for a core: the
                # bound is the best bandwidth the triad shows on one thread or on all of them.
                runs = {"triad": triad(n, args.threads), "triad1": triad(n, 1),
                        "nnplug": forward_backward(ours, x, y), "ops": ops_alone(loss, x, y)}
                if torch_supports(theirs, x, y):
                    runs["torch"] = forward_backward(theirs, x, y)
                best = best_times(runs, args.repeats)
                triad_gbs = 12 * n / min(best["triad"], best["triad1"]) / 1e9
                moved = ARRAYS_MOVED * n * x.element_size()

                def columns(name):
                    if name not in best:
                        return "n/a | n/a | n/a"
                    gbs = moved / best[name] / 1e9
                    return f"{best[name] * 1e3:.2f} | {gbs:.1f} | {gbs / triad_gbs:.2f}"
                speedup = f"{best['torch'] / best['nnplug']:.2f}x" if "torch" in best else "n/a"
                ops_share = moved / best["ops"] / 1e9 / triad_gbs
                print(f"| {loss} | {dtype_name} | {size}M | {triad_gbs:.1f} | {columns('nnplug')} | "
                      f"{best['ops'] * 1e3:.2f} | {ops_share:.2f} | {columns('torch')} | {speedup} |", flush=True)
                del x, y, runs
    nnplug.finalize()


if __name__ == "__main__":
    main()
