#!/usr/bin/env python3
"""The Digits classifier of nnplug_train (10 classes), written with torch.optim and trained
with nnplug.torch.CrossEntropyLoss (or NLLLoss with `loss: nll`): the loss and its gradient
run as aclnn ops on the backend the config names. In one process, or data-parallel with
DistributedDataParallel on the processes torchrun starts (see docs/python.md):

    /usr/bin/python3 examples/torch_train/train_digits.py [--backend atlas_emu]
    GLOO_SOCKET_IFNAME=lo /usr/bin/python3 -m torch.distributed.run --nproc_per_node=2 \\
        --master_addr 127.0.0.1 --master_port 29500 --redirects 2 --tee 2 --monitor_interval 0.2 \\
        examples/torch_train/train_digits.py

(Debian's torch 1.13 launcher fails on Python 3.11 unless --redirects and --tee are both 1 or 2.)
"""

import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_common as common  # noqa: E402

import nnplug  # noqa: E402
import nnplug.torch as nt  # noqa: E402


def main():
    args = common.parse_arguments(__doc__, "train_digits.yaml")
    settings = common.read_settings(args.config)
    processes = common.Processes()
    nnplug.init(config=args.config, backend=args.backend)
    train_settings = settings["train"]
    epochs = args.epochs if args.epochs is not None else train_settings["epochs"]
    torch.manual_seed(train_settings["seed"])

    features, labels = common.load_csv(common.find_data(args.config, settings["data"]["path"]))
    classes = int(labels.max()) + 1
    train_rows, test_rows = common.stratified_split(labels, classes, settings["data"]["test_fraction"],
                                                    train_settings["seed"])
    features = common.standardize(features, train_rows)
    labels = labels.long()
    x_train, y_train, x_test, y_test = features[train_rows], labels[train_rows], features[test_rows], labels[test_rows]

    weight = None
    if train_settings.get("class_weights", "none") == "balanced":  # n / (classes * count of the class)
        counts = torch.bincount(y_train, minlength=classes).double()
        weight = (len(y_train) / (classes * counts)).float()
    # Summed over the rows: nnplug_train's loss of a batch is the sum of its rows' weighted
    # losses over the batch's row count (torch's weighted mean would divide by the weights).
    loss = settings.get("loss", "cross_entropy")
    if loss == "nll":
        loss_fn = nt.NLLLoss(weight=weight, reduction="sum")
        model = common.build_model(settings, features.shape[1], classes, torch.nn.LogSoftmax(dim=1))
    else:
        loss_fn = nt.CrossEntropyLoss(weight=weight, reduction="sum")
        model = common.build_model(settings, features.shape[1], classes)
    common.initialize(model, train_settings["seed"])
    optimizer = common.build_optimizer(settings, model)
    if processes.rank == 0:
        print(f"nnplug backend {nnplug.backend()}; {processes.size} process(es); {len(y_train)} training rows, "
              f"{len(y_test)} test rows, {classes} classes, loss {type(loss_fn).__name__}", flush=True)

    def loss_of_rows(network, rows):
        return loss_fn(network(x_train[rows]), y_train[rows])

    common.train(processes, processes.wrap(model), optimizer, loss_of_rows, len(y_train), settings, epochs,
                 no_sync=args.no_sync)

    agree = processes.parameters_agree(model)
    status = 0 if agree else 1
    if processes.rank == 0:
        with torch.no_grad():
            outputs = model(x_test)
            test_loss = float(loss_fn(outputs, y_test)) / len(y_test)
        correct = int((outputs.argmax(1) == y_test).sum())
        print(f"Test accuracy: {100 * correct / len(y_test):.2f}% ({correct} of {len(y_test)}), "
              f"test loss {test_loss:.4f}", flush=True)
        if processes.distributed:
            print(f"parameters {'identical' if agree else 'DIFFERENT'} on the {processes.size} processes",
                  flush=True)
        status = status if math.isfinite(test_loss) else 1
    processes.finish()
    nnplug.finalize()
    return status


if __name__ == "__main__":
    sys.exit(main())
