#!/usr/bin/python3
"""Training throughput of nnplug_train against PyTorch on the same machine, in one run.

Both train the same model on the same data shape (a noisy linearly separable synthetic
set, 80% of it trained on) with the same loss (mean binary cross-entropy with balanced
per-sample class weights; --loss bce: sigmoid outputs and BCELoss, bce_with_logits:
logits and BCEWithLogitsLoss), optimizer (--optimizer: SGD with momentum 0.9, or Adam) and
batch size. PyTorch is written the usual way: nn.Linear layers, the loss module,
torch.optim, a shuffled index gather per batch; it runs at each of --torch-threads and
its best counts; each side runs every case --repeat times and its fastest run counts. Only
the training loop is timed: per epoch, drawing the order; per batch, gathering the shuffled
rows, forward, loss, backward and the optimizer step.

The bound: an epoch must read every training row once (features, label and weight:
4 * (D + 2) bytes a row), so no program trains faster than the STREAM triad bandwidth
divided by those bytes. The triad is measured by nnplug_compare_bce (a bench/ target, built
by default) on --threads threads, in the same run, before each
case and after the last, and the median counts (a shared machine's bandwidth swings with
its neighbours' load); nnplug's samples/s is printed as a share of that bound. Reading the
rows in a shuffled order costs more than streaming them: nnplug_shuffled_gather (also in
bench/), measured alongside the triad, does the least work of a shuffled epoch (every row
read once in a random order, one dot product each) and reads the same rows in order; the
medians are printed as shares of the bound too. It also does, for each batch size, the least
work of an SGD epoch: the order drawn as nnplug_train draws it, then the rows read in steps
of the batch size, every thread joining at each step's end (a step needs the weights of the
one before); the last column is nnplug's samples/s as a share of that.

A benchmark, not a test: it prints one Markdown table (and --json writes the numbers).
A line on stderr before and after each case shows progress; a rate whose two fastest runs
differ by more than --max-spread, or a triad that swung more than that through the run, is
named in a warning after the table: the ratios built on it are noise.

  bench/train/compare_with_pytorch.py --program build/bin/nnplug_train --threads 2
"""
import argparse
import datetime
import json
import os
import pathlib
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]


def spread(rates):
    """(fastest - second fastest) / fastest of repeated rates; None with fewer than two."""
    if len(rates) < 2:
        return None
    fastest, second = sorted(rates, reverse=True)[:2]
    return (fastest - second) / fastest


def nnplug_run(args, case, output):
    command = [args.program, "--synthetic", f"{args.rows},{args.features}", "--output", output,
               "--set", f"train.epochs={case['epochs']}", "--set", f"train.batch_size={case['batch']}",
               "--set", f"optimizer.kind={args.optimizer}", "--set", f"optimizer.lr={args.lr}",
               "--set", "optimizer.momentum=0.9", "--set", f"loss={args.loss}", "--set", "checkpoint.every=0",
               "--set", f"train.threads={args.threads}", "--set", f"backends.cpu_tbb.threads={args.threads}"]
    if case["hidden"]:
        command += ["--set", "model.kind=mlp", "--set", f"model.hidden=[{case['hidden']}]"]
    if args.backend:
        command += ["--backend", args.backend]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    summary = json.loads(pathlib.Path(output, "summary.json").read_text())
    return summary["train_samples_per_second"], summary["test_accuracy"], summary["backend"]


def torch_data(args):
    import torch
    torch.manual_seed(0)
    rows, features = args.rows, args.features
    x = torch.randn(rows, features)
    direction = torch.randn(features)
    margin = x @ direction / direction.norm() + 0.5 * torch.randn(rows)
    y = (margin > 0).float()
    train_rows = rows - round(0.2 * rows)
    x_train, y_train, x_test, y_test = x[:train_rows], y[:train_rows], x[train_rows:], y[train_rows:]
    mean, std = x_train.mean(0), x_train.std(0, unbiased=False)
    x_train, x_test = (x_train - mean) / std, (x_test - mean) / std
    positives = y_train.sum()
    class_weight = torch.tensor([train_rows / (2 * (train_rows - positives)), train_rows / (2 * positives)])
    return x_train.contiguous(), y_train, class_weight[y_train.long()], x_test, y_test


def torch_run(args, case, data, threads):
    import torch
    torch.manual_seed(0)
    torch.set_num_threads(threads)
    x_train, y_train, w_train, x_test, y_test = data
    train_rows = x_train.shape[0]
    layers, width = [], args.features
    for size in ([int(s) for s in case["hidden"].split(",")] if case["hidden"] else []):
        layers += [torch.nn.Linear(width, size), torch.nn.ReLU()]
        width = size
    layers.append(torch.nn.Linear(width, 1))
    logits = args.loss == "bce_with_logits"
    if not logits:
        layers.append(torch.nn.Sigmoid())
    model = torch.nn.Sequential(*layers)
    if args.optimizer == "sgd":
        optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    else:
        optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    seconds, samples = 0.0, 0
    for _ in range(case["epochs"]):
        start = time.perf_counter()
        order = torch.randperm(train_rows)
        for first in range(0, train_rows, case["batch"]):
            rows_of_batch = order[first:first + case["batch"]]
            outputs = model(x_train[rows_of_batch]).squeeze(1)
            weight = w_train[rows_of_batch]
            if logits:
                loss = torch.nn.functional.binary_cross_entropy_with_logits(outputs, y_train[rows_of_batch],
                                                                           weight=weight)
            else:
                loss = torch.nn.functional.binary_cross_entropy(outputs, y_train[rows_of_batch], weight=weight)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
        seconds += time.perf_counter() - start
        samples += train_rows
    with torch.no_grad():
        scores = model(x_test).squeeze(1)
        predicted = (scores >= 0.0) if logits else (scores >= 0.5)
        accuracy = (predicted.float() == y_test).float().mean().item()
    return samples / seconds, accuracy, torch.__version__


def triad_gbs(args):
    """STREAM triad GB/s on args.threads threads, from nnplug_compare_bce's 64M float32 case."""
    program = pathlib.Path(args.triad_program)
    if not os.access(program, os.X_OK):
        sys.exit(f"{program} is not an executable: build the nnplug_compare_bce target "
                 "(bench/, left out only by -DNNPLUG_BUILD_BENCHMARKS=OFF), or pass --triad-program")
    result = subprocess.run([str(program), "--threads", str(args.threads), "--sizes", "64M", "--dtypes", "float32",
                             "--ops", "bce", "--reps", "5", "--markdown"],
                            check=True, capture_output=True, text=True)
    header, values = None, []
    for line in result.stdout.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if "triad GB/s" in cells:
            header = cells
        elif header and len(cells) == len(header) and re.match(r"^[0-9.]+$", cells[header.index("triad GB/s")]):
            values.append(float(cells[header.index("triad GB/s")]))
    if not values:
        sys.exit(f"no triad GB/s in the output of {program}:\n{result.stdout}")
    return max(values)


def gather_rates(args, train_rows, step_sizes):
    """nnplug_shuffled_gather on args.threads threads: (shuffled, in order) rows/s, per batch
    size the rows/s of an epoch drawn and read in steps of that size, and the draw's seconds."""
    program = pathlib.Path(args.gather_program)
    if not os.access(program, os.X_OK):
        sys.exit(f"{program} is not an executable: build the nnplug_shuffled_gather target "
                 "(bench/, left out only by -DNNPLUG_BUILD_BENCHMARKS=OFF), or pass --gather-program")
    result = subprocess.run([str(program), "--rows", str(train_rows), "--features", str(args.features),
                             "--threads", str(args.threads), "--step-rows", *[str(b) for b in step_sizes]],
                            check=True, capture_output=True, text=True)
    rates, stepped = {}, {}
    for line in result.stdout.splitlines():
        match = re.match(r"^(shuffled|in order) rows/s ([0-9.e+]+)$", line.strip())
        if match:
            rates[match.group(1)] = float(match.group(2))
        match = re.match(r"^drawn and read in steps of ([0-9]+) rows/s ([0-9.e+]+)", line.strip())
        if match:
            stepped[int(match.group(1))] = float(match.group(2))
        match = re.match(r"^order draw seconds ([0-9.e+-]+)$", line.strip())
        if match:
            rates["draw"] = float(match.group(1))
    if len(rates) != 3 or set(stepped) != set(step_sizes):
        sys.exit(f"no rows/s in the output of {program}:\n{result.stdout}")
    return rates["shuffled"], rates["in order"], stepped, rates["draw"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--program", default=str(ROOT / "build/bin/nnplug_train"))
    parser.add_argument("--triad-program", default="",
                        help="nnplug_compare_bce (default: beside --program)")
    parser.add_argument("--gather-program", default="",
                        help="nnplug_shuffled_gather (default: beside --program)")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--features", type=int, default=64)
    parser.add_argument("--batches", default="256,4096,65536", help="logistic regression batch sizes")
    parser.add_argument("--mlp", default="64,32", help="MLP hidden sizes ('' for none)")
    parser.add_argument("--mlp-batches", default="256", help="MLP batch sizes")
    parser.add_argument("--epochs", type=int, default=2, help="epochs of logistic regression")
    parser.add_argument("--repeat", type=int, default=3,
                        help="runs of each case on each side; the fastest counts (a shared machine only slows runs down)")
    parser.add_argument("--mlp-epochs", type=int, default=1, help="epochs of the MLP")
    parser.add_argument("--loss", choices=["bce", "bce_with_logits"], default="bce",
                        help="bce: sigmoid + BCELoss / aclnnBinaryCrossEntropy; "
                             "bce_with_logits: BCEWithLogitsLoss / aclnnBinaryCrossEntropyWithLogits")
    parser.add_argument("--optimizer", choices=["sgd", "adam"], default="sgd")
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--backend", default="", help="nnplug backend (default: the config's, cpu_tbb)")
    parser.add_argument("--threads", type=int, default=2, help="nnplug's host and backend threads, and the triad's")
    parser.add_argument("--torch-threads", default="1,2", help="PyTorch intra-op thread counts; the best one counts")
    parser.add_argument("--json", default="", help="also write the numbers to this file")
    parser.add_argument("--max-spread", type=float, default=0.10,
                        help="largest relative gap between a side's two fastest runs before its ratio is "
                             "reported as unsteady")
    args = parser.parse_args()
    if not os.access(args.program, os.X_OK):
        sys.exit(f"{args.program} is not an executable: build nnplug_train first or pass --program")
    if not args.triad_program:
        args.triad_program = str(pathlib.Path(args.program).parent / "nnplug_compare_bce")
    if not args.gather_program:
        args.gather_program = str(pathlib.Path(args.program).parent / "nnplug_shuffled_gather")

    cases = [{"hidden": "", "batch": int(b), "epochs": args.epochs} for b in args.batches.split(",") if b]
    if args.mlp:
        cases += [{"hidden": args.mlp, "batch": int(b), "epochs": args.mlp_epochs}
                  for b in args.mlp_batches.split(",") if b]
    train_rows = args.rows - round(0.2 * args.rows)
    bytes_per_row = 4 * (args.features + 2)

    # The triad and the bare reads, measured before each case and after the last: on a shared
    # machine they swing with the neighbours' load, so the bound is the median of them all.
    samples = []

    step_sizes = sorted({case["batch"] for case in cases})

    def measure_bound():
        samples.append((triad_gbs(args), *gather_rates(args, train_rows, step_sizes)))

    try:
        import torch  # noqa: F401
        data = torch_data(args)
    except ImportError:
        data = None
        print("PyTorch is not installed (Debian: apt-get install python3-torch, or tools/dev.sh perf): "
              "no comparison", file=sys.stderr)

    results = []
    unsteady = []
    started = time.monotonic()
    for index, case in enumerate(cases, 1):
        model = f"MLP [{case['hidden']}]" if case["hidden"] else "logistic regression"
        print(f"[{index}/{len(cases)}] {time.monotonic() - started:.0f} s  {model}, batch {case['batch']}",
              file=sys.stderr, flush=True)
        measure_bound()
        our_runs = []
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory() as output:
                rate, our_accuracy, backend = nnplug_run(args, case, output)
                our_runs.append(rate)
        ours = max(our_runs)
        best, best_threads, by_threads, version, best_runs = 0.0, 0, {}, "", []
        if data is not None:
            for threads in sorted({int(t) for t in args.torch_threads.split(",")}):
                their_runs = []
                for _ in range(args.repeat):
                    rate, their_accuracy, version = torch_run(args, case, data, threads)
                    their_runs.append(rate)
                theirs = max(their_runs)
                by_threads[threads] = (theirs, their_accuracy)
                if theirs > best:
                    best, best_threads, best_runs = theirs, threads, their_runs
        for side, runs in (("nnplug_train", our_runs), ("PyTorch", best_runs)):
            gap = spread(runs)
            if runs and (gap is None or gap > args.max_spread):
                unsteady.append(f"{model}, batch {case['batch']}: {side}'s two fastest runs "
                                + ("cannot be compared (one run)" if gap is None else f"differ by {gap:.0%}"))
        results.append({"model": model,
                        "batch": case["batch"], "epochs": case["epochs"], "nnplug": ours,
                        "nnplug_accuracy": our_accuracy, "torch": best, "torch_threads": best_threads,
                        "torch_by_threads": {str(t): v for t, v in by_threads.items()},
                        "ratio": ours / best if best else None})
        r = results[-1]
        print(f"# {r['model']}, batch {r['batch']}: nnplug {ours:,.0f} samples/s (accuracy {our_accuracy:.4f}); "
              + ", ".join(f"PyTorch {t} thread(s) {v[0]:,.0f} (accuracy {v[1]:.4f})" for t, v in by_threads.items()),
              file=sys.stderr)

    measure_bound()
    gbs, gather_shuffled, gather_in_order = (statistics.median(sample[i] for sample in samples) for i in range(3))
    bound = gbs * 1e9 / bytes_per_row
    least_epoch = {b: statistics.median(sample[3][b] for sample in samples) for b in step_sizes}
    draw_seconds = statistics.median(sample[4] for sample in samples)
    for r in results:
        r["share_of_bound"] = r["nnplug"] / bound
        r["least_epoch"] = least_epoch[r["batch"]]
        r["share_of_least_epoch"] = r["nnplug"] / least_epoch[r["batch"]]

    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(f"{date}; {platform.node()}, {os.cpu_count()} CPUs; synthetic {args.rows:,} x {args.features} "
          f"({train_rows:,} rows trained), loss {args.loss}, optimizer {args.optimizer} lr {args.lr}; "
          f"nnplug_train on {backend} with {args.threads} threads; "
          f"PyTorch {version or 'not installed'} at its best of {args.torch_threads} threads; "
          f"each the fastest of {args.repeat} runs")
    triads = [sample[0] for sample in samples]
    print(f"Triad {gbs:.2f} GB/s on {args.threads} threads (the median of {len(samples)} measurements through the run, "
          f"{min(triads):.2f} to {max(triads):.2f}); an epoch reads {bytes_per_row} bytes a row, "
          f"so the bound is {bound / 1e6:.1f} M samples/s")
    print(f"Reading every row once with one dot product, on {args.threads} threads: "
          f"{gather_shuffled / 1e6:.1f} M rows/s in a shuffled order ({gather_shuffled / bound:.2f} of the bound), "
          f"{gather_in_order / 1e6:.1f} M in order ({gather_in_order / bound:.2f})")
    print("The least work of an SGD epoch (the order drawn as nnplug_train draws it, then the rows read in steps "
          "of the batch size with every thread joining at each step's end): "
          + ", ".join(f"{least_epoch[b] / 1e6:.1f} M rows/s at batch {b} ({least_epoch[b] / bound:.2f} of the bound)"
                      for b in step_sizes) + f"; drawing the order alone takes {draw_seconds * 1e3:.2f} ms at best\n")
    print("| model | batch | nnplug_train samples/s | PyTorch samples/s (threads) | ratio | share of the bound "
          "| share of the least epoch |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        torch_text = f"{r['torch'] / 1e6:.2f} M ({r['torch_threads']})" if r["torch"] else "-"
        ratio_text = f"{r['ratio']:.1f}" if r["ratio"] else "-"
        print(f"| {r['model']} | {r['batch']} | {r['nnplug'] / 1e6:.2f} M | {torch_text} | {ratio_text} | "
              f"{r['share_of_bound']:.2f} | {r['share_of_least_epoch']:.2f} |")
    triad_swing = (max(triads) - min(triads)) / gbs
    if triad_swing > args.max_spread:
        unsteady.append(f"the triad swung by {triad_swing:.0%} of its median through the run, so the bound moved "
                        "with it")
    if unsteady:
        print(f"\nWarning: unsteady measurements (more than {args.max_spread:.0%} apart; a busy machine), "
              "the ratios built on them are noise:\n" + "\n".join(f"- {u}" for u in unsteady))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps({"date": date, "triad_gbs": gbs, "bound": bound,
                                                       "bound_samples": [list(sample) for sample in samples],
                                                       "gather_shuffled": gather_shuffled,
                                                       "gather_in_order": gather_in_order,
                                                       "least_epoch": {str(b): v for b, v in least_epoch.items()},
                                                       "draw_seconds": draw_seconds,
                                                       "bytes_per_row": bytes_per_row, "loss": args.loss,
                                                       "optimizer": args.optimizer, "threads": args.threads,
                                                       "results": results}, indent=2))


if __name__ == "__main__":
    main()
