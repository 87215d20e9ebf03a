#!/usr/bin/python3
"""Training throughput of nnplug_train against PyTorch on the same machine.

Both train the same model (logistic regression, or an MLP with --hidden), with the same
loss (mean binary cross-entropy with balanced per-sample class weights on sigmoid
outputs), optimizer (Adam, lr 0.01), batch size and data shape (a noisy linearly
separable synthetic set, 80% of it trained on). Only the training loop is timed: per
batch, gathering the shuffled rows, forward, loss, backward and the optimizer step.
A benchmark, not a test: it prints samples/s of both and their ratio.

  bench/train/compare_with_pytorch.py --program build/bin/nnplug_train --rows 1000000 --features 64
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time


def nnplug_run(args, output):
    command = [args.program, "--synthetic", f"{args.rows},{args.features}", "--output", output,
               "--set", f"train.epochs={args.epochs}", "--set", f"train.batch_size={args.batch_size}",
               "--set", "optimizer.kind=adam", "--set", "optimizer.lr=0.01", "--set", "checkpoint.every=0"]
    if args.hidden:
        command += ["--set", "model.kind=mlp", "--set", f"model.hidden=[{args.hidden}]"]
    if args.backend:
        command += ["--backend", args.backend]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    summary = json.loads(pathlib.Path(output, "summary.json").read_text())
    return summary["train_samples_per_second"], summary["test_accuracy"], summary["backend"]


def torch_run(args, threads):
    import torch
    torch.manual_seed(0)
    torch.set_num_threads(threads)
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
    w_train = class_weight[y_train.long()]

    layers, width = [], features
    for size in ([int(s) for s in args.hidden.split(",")] if args.hidden else []):
        layers += [torch.nn.Linear(width, size), torch.nn.ReLU()]
        width = size
    model = torch.nn.Sequential(*layers, torch.nn.Linear(width, 1), torch.nn.Sigmoid())
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    seconds, samples = 0.0, 0
    for _ in range(args.epochs):
        start = time.perf_counter()
        order = torch.randperm(train_rows)
        for first in range(0, train_rows, args.batch_size):
            rows_of_batch = order[first:first + args.batch_size]
            probabilities = model(x_train[rows_of_batch]).squeeze(1)
            loss = torch.nn.functional.binary_cross_entropy(probabilities, y_train[rows_of_batch],
                                                            weight=w_train[rows_of_batch])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
        seconds += time.perf_counter() - start
        samples += train_rows
    with torch.no_grad():
        accuracy = ((model(x_test).squeeze(1) >= 0.5).float() == y_test).float().mean().item()
    return samples / seconds, accuracy, torch.__version__


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--program", default=str(pathlib.Path(__file__).resolve().parents[2] / "build/bin/nnplug_train"))
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--features", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--hidden", default="", help="MLP hidden sizes, e.g. 32,16 (default: logistic regression)")
    parser.add_argument("--backend", default="", help="nnplug backend (default: the config's, cpu_tbb)")
    parser.add_argument("--threads", default=f"1,{os.cpu_count()}",
                        help="PyTorch intra-op thread counts to try (the best one gives the ratio)")
    args = parser.parse_args()
    if not os.access(args.program, os.X_OK):
        sys.exit(f"{args.program} is not an executable: build nnplug_train first or pass --program")

    shape = f"{args.rows} x {args.features}, batch {args.batch_size}, {args.epochs} epochs, " + \
            (f"MLP {args.hidden}" if args.hidden else "logistic regression")
    print(f"Synthetic {shape}")
    with tempfile.TemporaryDirectory() as output:
        ours, our_accuracy, backend = nnplug_run(args, output)
    print(f"nnplug_train ({backend}):      {ours:12,.0f} samples/s   test accuracy {our_accuracy:.4f}")
    best = 0.0
    for threads in sorted({int(t) for t in args.threads.split(",")}):
        try:
            theirs, their_accuracy, version = torch_run(args, threads)
        except ImportError:
            print("PyTorch is not installed (Debian: apt-get install python3-torch): no comparison")
            return
        best = max(best, theirs)
        print(f"PyTorch {version} ({threads} thread{'s' if threads > 1 else ''}): "
              f"{theirs:12,.0f} samples/s   test accuracy {their_accuracy:.4f}")
    print(f"ratio nnplug / PyTorch (its best thread count): {ours / best:.2f}")


if __name__ == "__main__":
    main()
