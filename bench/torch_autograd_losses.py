#!/usr/bin/env python3
"""nnplug.torch's losses against torch.nn.functional's, forward + backward through autograd
on the same tensors, from the sizes of one training batch to those of a large one, beside the
machine's memory bandwidth (a STREAM triad), all measured in one process, interleaved, best
of several runs. Not a test: it asserts nothing.

    PYTHONPATH=build/lib/python3.11/dist-packages python3 bench/torch_autograd_losses.py

Columns: the best time of one forward + backward (reduction mean) through autograd, the
gradient w.r.t. input; `vs torch` is torch's time over nnplug's. From 1M elements on, GB/s
counts the bytes the two passes must move (forward: input, target; backward: input, target,
gradient written; a class loss's target counted as its rows) and `of triad` is nnplug's
share of the triad's bandwidth (the triad over arrays too large for the cache: the memory's
bandwidth). A class loss (cross_entropy, nll) of n elements is n / 10 rows of 10 classes. A
size below 1M runs 1M / n calls per timing (the best per-call time of runs of a millisecond
or more counts). "n/a": torch 1.13 has no CPU kernel for that dtype.
"""

import argparse
import os
import time
import warnings

import torch
import torch.nn.functional as F

import nnplug
import nnplug.torch as nt

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
CLASSES = 10
TRIAD_ELEMENTS = 1 << 24  # 192 MiB in all: past any cache
# name: (nnplug's function, torch's, the kind of operands it takes)
LOSSES = {
    "bce": (nt.binary_cross_entropy, F.binary_cross_entropy, "probability"),
    "bce_with_logits": (nt.binary_cross_entropy_with_logits, F.binary_cross_entropy_with_logits, "logit"),
    "mse": (nt.mse_loss, F.mse_loss, "value"),
    "l1": (nt.l1_loss, F.l1_loss, "value"),
    "smooth_l1": (nt.smooth_l1_loss, F.smooth_l1_loss, "value"),
    "huber": (nt.huber_loss, F.huber_loss, "value"),
    "soft_margin": (nt.soft_margin_loss, F.soft_margin_loss, "sign"),
    "kl_div": (lambda x, y: nt.kl_div(x, y, reduction="batchmean"),
               lambda x, y: F.kl_div(x, y, reduction="batchmean"), "distribution"),
    "nll": (nt.nll_loss, F.nll_loss, "log_probability"),
    "cross_entropy": (nt.cross_entropy, F.cross_entropy, "class"),
}


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="64,1024,4096,65536,1048576,16777216",
                        help="element counts, comma-separated")
    parser.add_argument("--dtypes", default="float32,float16,bfloat16")
    parser.add_argument("--losses", default=",".join(LOSSES))
    parser.add_argument("--repeats", type=int, default=7, help="runs of each; the best counts")
    parser.add_argument("--threads", type=int, default=os.cpu_count(),
                        help="torch's intra-op threads (default: every core, as cpu_tbb's default config)")
    parser.add_argument("--backend", default="cpu_tbb")
    return parser.parse_args()


def operands(kind, n, dtype):
    """input (requiring its gradient) and target of n elements for a loss of `kind`."""
    g = torch.Generator().manual_seed(0)
    if kind in ("class", "log_probability"):
        x = torch.randn(n // CLASSES, CLASSES, generator=g)
        if kind == "log_probability":
            x = x.log_softmax(1)
        return x.to(dtype).requires_grad_(True), torch.randint(0, CLASSES, (n // CLASSES,), generator=g)
    if kind == "probability":
        x = torch.rand(n, generator=g) * 0.98 + 0.01
    elif kind == "distribution":
        x = torch.rand(n, generator=g).log()
    else:
        x = torch.randn(n, generator=g) * 3
    y = torch.rand(n, generator=g)
    if kind == "sign":
        y = (y > 0.5).float() * 2 - 1
    return x.to(dtype).requires_grad_(True), y.to(dtype)


def forward_backward(loss_function, x, y, calls):
    def run():
        for _ in range(calls):
            torch.autograd.grad(loss_function(x, y), [x])
    return run


def triad_seconds(n, threads, repeats):
    """The best time per element of a = b + s * c, two reads and one write of float32 (STREAM's
    count: 12 bytes per element), on `threads` of torch's intra-op threads, over arrays of at
    least TRIAD_ELEMENTS so that they come from memory, not from the cache. Measured apart
    from the losses: torch.set_num_threads remakes torch's thread pool, whose new threads spin
    for a while and would take a core from whichever loss ran next."""
    n = max(n, TRIAD_ELEMENTS)
    a, b, c = torch.empty(n), torch.rand(n), torch.rand(n)
    others = torch.get_num_threads()
    torch.set_num_threads(threads)
    best = best_times({"triad": lambda: torch.add(b, c, alpha=3.0, out=a)}, repeats)["triad"]
    torch.set_num_threads(others)
    return best / n


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


def torch_supports(function, x, y):
    warnings.filterwarnings("ignore", message="Applying the CPU mse kernel on half")  # then refused
    try:
        forward_backward(function, x[:8].detach().requires_grad_(True), y[:8], 1)()
        return True
    except RuntimeError:
        return False


def bytes_moved(x, y):
    """forward: input, target; backward: input, target, gradient."""
    return 3 * x.numel() * x.element_size() + 2 * y.numel() * y.element_size()


def measure(loss, dtype_name, n, args):
    ours, theirs, kind = LOSSES[loss]
    x, y = operands(kind, n, DTYPES[dtype_name])
    calls = max(1, (1 << 20) // n)  # about a millisecond or more per timing
    runs = {"nnplug": forward_backward(ours, x, y, calls)}
    if torch_supports(theirs, x, y):
        runs["torch"] = forward_backward(theirs, x, y, calls)
    big = n >= 1 << 20
    if big:
        # On a shared machine a thread of torch's OpenMP team may wait for a core: the bound
        # is the best bandwidth the triad shows on one thread or on all of them.
        triad_best = min(triad_seconds(n, args.threads, args.repeats), triad_seconds(n, 1, args.repeats))
    best = {name: t / calls for name, t in best_times(runs, args.repeats).items()}
    row = f"| {loss} | {dtype_name} | {n} | {best['nnplug'] * 1e6:.1f} | "
    row += f"{best['torch'] * 1e6:.1f} | {best['torch'] / best['nnplug']:.2f}x |" if "torch" in best else "n/a | n/a |"
    if big:
        triad_gbs = 12 / triad_best / 1e9
        gbs = bytes_moved(x, y) / best["nnplug"] / 1e9
        row += f" {triad_gbs:.1f} | {gbs:.1f} | {gbs / triad_gbs:.2f} |"
    else:
        row += " | | |"
    return row


def main():
    args = parse_arguments()
    torch.set_num_threads(args.threads)
    nnplug.init(backend=args.backend)
    print(f"nnplug backend {nnplug.backend()}, torch {torch.__version__} with {torch.get_num_threads()} threads, "
          f"best of {args.repeats}")
    print("| loss | dtype | elements | nnplug µs | torch µs | vs torch | triad GB/s | nnplug GB/s | of triad |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in (int(s) for s in args.sizes.split(",")):
        for loss in args.losses.split(","):
            for dtype_name in args.dtypes.split(","):
                print(measure(loss, dtype_name, n, args), flush=True)
    nnplug.finalize()


if __name__ == "__main__":
    main()
