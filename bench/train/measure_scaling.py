#!/usr/bin/python3
"""Measures the parameters of docs/scaling.md's model of a data-parallel nnplug_train step
and predicts samples/s for more ranks than this machine has.

A step on N ranks takes  T(B, N) = t0 + c * rows(B, N) + T_combine(N, bytes(B))
  t0, c       per-step overhead and seconds per sample of one rank (nnplug_train alone,
              train.threads=1, fitted over batch sizes);
  rows(B, N)  the rows of the rank with the most shards: ceil(S / N) shards of R rows
              (S = ceil(B / R) shards, R from the batch size alone, as in trainer.h);
  T_combine   ceil(log2 N) * alpha + (N - 1) / N * bytes * beta, the MPI_Allgatherv of the
              ranks' tree blocks (bytes = N * 64 + blocks * block record, where each rank
              sends the aligned blocks that tile its shards) fitted from combine_cost.c's times
              on 2 and 3 ranks; beta for the prediction is the network's (--network-gbps),
              alpha --network-alpha-us per message step.
It also runs nnplug_train under mpirun -np 1, 2, 3 to set the model beside measured steps.

  bench/train/measure_scaling.py --program build/bin/nnplug_train
"""
import argparse
import json
import math
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
MPI_FLAGS = ["--oversubscribe", "--bind-to", "none", "--allow-run-as-root"]
MAX_SHARDS = 256  # kMaxShards in examples/train/src/trainer.h


def shard_rows(batch):
    per_shard = (batch + MAX_SHARDS - 1) // MAX_SHARDS
    return max(64, (per_shard + 63) // 64 * 64)


def shards(batch):
    return (batch + shard_rows(batch) - 1) // shard_rows(batch)


def block_record_bytes(parameters):
    """A tree block's record: loss sum, correct count and the gradient sum in double."""
    return (16 + 8 * parameters + 63) // 64 * 64


def shard_record_bytes(parameters):
    """A one-shard block travels as the shard's record: its gradient in float32."""
    return (16 + 4 * parameters + 63) // 64 * 64


def tree_blocks(first, last):
    """Sizes of the largest aligned power-of-two blocks that tile [first, last), as in shard_tree.cpp."""
    sizes = []
    while first < last:
        size = 1
        while first % (2 * size) == 0 and first + 2 * size <= last:
            size *= 2
        sizes.append(size)
        first += size
    return sizes


def combine_bytes(batch, ranks, parameters):
    count = shards(batch)
    sizes = [size for r in range(ranks) for size in tree_blocks(count * r // ranks, count * (r + 1) // ranks)]
    return ranks * 64 + sum(shard_record_bytes(parameters) if size == 1 else block_record_bytes(parameters)
                            for size in sizes)


def parameter_count(features, hidden):
    sizes = [features] + hidden + [1]
    return sum(sizes[i] * sizes[i + 1] + sizes[i + 1] for i in range(len(sizes) - 1))


def fit_line(points):
    """Least squares y = a + b x."""
    n = len(points)
    sx = sum(x for x, _ in points)
    sy = sum(y for _, y in points)
    sxx = sum(x * x for x, _ in points)
    sxy = sum(x * y for x, y in points)
    b = (n * sxy - sx * sy) / (n * sxx - sx * sx)
    return (sy - b * sx) / n, b


def train(args, model, batch, epochs, ranks, output, threads):
    command = [args.program, "--synthetic", f"{args.rows},{args.features}", "--output", output,
               "--set", f"train.epochs={epochs}", "--set", f"train.batch_size={batch}",
               "--set", "optimizer.kind=sgd", "--set", "checkpoint.every=0",
               "--set", f"train.threads={threads}", "--set", f"backends.cpu_tbb.threads={threads}"]
    if model["hidden"]:
        command += ["--set", "model.kind=mlp", "--set", f"model.hidden=[{','.join(map(str, model['hidden']))}]"]
    if ranks:
        command = [args.mpirun, *MPI_FLAGS, "-np", str(ranks)] + command
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    summary = json.loads(pathlib.Path(output, "summary.json").read_text())
    return summary


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--program", default=str(ROOT / "build/bin/nnplug_train"))
    parser.add_argument("--mpirun", default=shutil.which("mpirun") or "mpirun")
    parser.add_argument("--mpicc", default=shutil.which("mpicc") or "mpicc")
    parser.add_argument("--rows", type=int, default=400_000)
    parser.add_argument("--features", type=int, default=64)
    parser.add_argument("--network-gbps", type=float, default=100.0)
    parser.add_argument("--network-alpha-us", type=float, default=5.0,
                        help="latency of one message step on the network (an assumption: RDMA-class)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each mpirun case; the fastest counts")
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    models = [{"name": "logistic regression", "hidden": []}, {"name": "MLP [64, 32]", "hidden": [64, 32]}]
    result = {"rows": args.rows, "features": args.features}

    with tempfile.TemporaryDirectory() as work:
        # 1. The combine alone on 2 and 3 ranks.
        binary = pathlib.Path(work, "combine_cost")
        subprocess.run([args.mpicc, "-O2", "-o", str(binary), str(ROOT / "bench/train/combine_cost.c")], check=True)
        combine = {}
        for ranks in (2, 3):
            lines = subprocess.run([args.mpirun, *MPI_FLAGS, "-np", str(ranks), str(binary), "200"], check=True,
                                   capture_output=True, text=True).stdout.split()
            rows = [line.split(",") for line in lines[1:]]
            # The fastest repetitions: the transfer's own cost on this shared machine.
            points = [(float(r[1]), float(r[4])) for r in rows if int(r[1]) <= 1 << 20]
            a, b = fit_line(points)
            steps = math.ceil(math.log2(ranks))
            combine[ranks] = {"alpha": a / steps, "beta": b / ((ranks - 1) / ranks),
                              "allgatherv_median": {r[1]: float(r[2]) for r in rows},
                              "allreduce_median": {r[1]: float(r[3]) for r in rows},
                              "allgatherv_fastest": {r[1]: float(r[4]) for r in rows},
                              "allreduce_fastest": {r[1]: float(r[5]) for r in rows}}
            print(f"combine on {ranks} ranks: alpha {1e6 * a / steps:.2f} us per step, "
                  f"beta {b / ((ranks - 1) / ranks) * 1e9:.3f} ns/byte "
                  f"({(ranks - 1) / ranks / b / 1e9:.2f} GB/s)", file=sys.stderr)
        result["combine"] = combine

        # 2. One rank's step: t0 + c * rows, from nnplug_train alone on one thread.
        for model in models:
            parameters = parameter_count(args.features, model["hidden"])
            # Each batch size twice, the faster counts (the machine may be shared); c from
            # the two larger batches, t0 what is left of the smallest one's step.
            points = []
            for batch in (256, 4096, 65536):
                epochs = 2 if not model["hidden"] else 1
                step = min(train(args, model, batch, epochs, 0, str(pathlib.Path(work, "one")), 1)["train_seconds"] /
                           (math.ceil(args.rows * 0.8 / batch) * epochs) for _ in range(2))
                points.append((batch, step))
            c = (points[2][1] - points[1][1]) / (points[2][0] - points[1][0])
            t0 = max(0.0, points[0][1] - c * points[0][0])
            model.update({"parameters": parameters, "t0": t0, "c": c, "steps": points})
            print(f"{model['name']} ({parameters} parameters): t0 {1e6 * t0:.1f} us per step, "
                  f"c {1e9 * c:.1f} ns per sample", file=sys.stderr)

            # 3. The same under mpirun -np 1, 2, 3 (one thread each), beside the model; the
            # fastest of --repeat runs (ranks that share two cores with a neighbour's load
            # now and then wait milliseconds for each other).
            model["measured"] = {}
            for ranks in (1, 2, 3):
                batch = 4096
                summary = min((train(args, model, batch, 1 if model["hidden"] else 2, ranks,
                                     str(pathlib.Path(work, f"np{ranks}")), 1) for _ in range(args.repeat)),
                              key=lambda run: run["train_seconds"] / run["steps"])
                step = summary["train_seconds"] / summary["steps"]
                rows = math.ceil(shards(batch) / ranks) * shard_rows(batch)
                fit = combine[ranks] if ranks > 1 else {"alpha": 0.0, "beta": 0.0}
                predicted = t0 + c * rows + (math.ceil(math.log2(ranks)) * fit["alpha"] + (ranks - 1) / ranks *
                                             combine_bytes(batch, ranks, parameters) * fit["beta"])
                model["measured"][ranks] = {"batch": batch, "step": step, "samples_per_second": batch / step,
                                            "combine_per_step": summary["combine_seconds"] / summary["steps"],
                                            "predicted_step": predicted}
                print(f"  np {ranks}, batch {batch}: {batch / step:,.0f} samples/s measured, "
                      f"{batch / predicted:,.0f} predicted; combine {1e6 * summary['combine_seconds'] / summary['steps']:.1f}"
                      f" us per step", file=sys.stderr)
        result["models"] = models

    # 4. Predictions on the network.
    beta = 8 / (args.network_gbps * 1e9)
    alpha = args.network_alpha_us * 1e-6
    result["network"] = {"gbps": args.network_gbps, "alpha": alpha, "beta": beta}
    batches = [2 ** k for k in range(8, 21)]
    for model in models:
        table = {}
        for ranks in (1, 8, 64, 512):
            row = {}
            for batch in batches:
                rows = math.ceil(shards(batch) / ranks) * shard_rows(batch)
                rows = min(rows, batch)
                step = model["t0"] + model["c"] * rows
                if ranks > 1:
                    step += math.ceil(math.log2(ranks)) * alpha + (ranks - 1) / ranks * \
                        combine_bytes(batch, ranks, model["parameters"]) * beta
                row[batch] = batch / step
            table[ranks] = row
        model["prediction"] = table
        print(f"\n{model['name']}: predicted samples/s at {args.network_gbps:g} Gb/s, alpha "
              f"{args.network_alpha_us:g} us")
        print("| batch | " + " | ".join(f"{r} rank{'s' if r > 1 else ''}" for r in table) + " |")
        print("|---" * (len(table) + 1) + "|")
        for batch in batches:
            print(f"| {batch} | " + " | ".join(f"{table[r][batch] / 1e6:.2f} M" for r in table) + " |")
        for smaller, ranks in ((1, 8), (8, 64), (64, 512)):
            print(f"{ranks} ranks beat {smaller} from batch "
                  f"{next((b for b in batches if table[ranks][b] > table[smaller][b]), 'never (up to 2^20)')}")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(result, indent=2, default=str))


if __name__ == "__main__":
    main()
