#!/usr/bin/env python3
"""The breast-cancer classifier of nnplug_train, written with torch.optim and trained with
nnplug.torch's losses: the loss and its gradient run as aclnn ops on the backend the
config names (the same YAML files: the runtime reads its keys, this program `application:`).
It runs under torchrun as train_digits.py does (train_common.py).

    python3 examples/torch_train/train_breast_cancer.py --config configs/train_atlas_910b.yaml
"""

import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_common as common  # noqa: E402

import nnplug  # noqa: E402
import nnplug.torch as nt  # noqa: E402


def class_weights(setting, labels):
    if setting == "none":
        return 1.0, 1.0
    if setting == "balanced":  # scikit-learn's n / (2 * count of the class)
        n, positives = len(labels), float(labels.sum())
        return n / (2 * (n - positives)), n / (2 * positives)
    return float(setting[0]), float(setting[1])


def roc_auc(scores, labels):
    """The probability that a random positive scores above a random negative (ties count half)."""
    order = torch.argsort(scores)
    ranks = torch.empty(len(scores), dtype=torch.float64)
    ranks[order] = torch.arange(1, len(scores) + 1, dtype=torch.float64)
    for value in torch.unique(scores):  # average ranks of ties
        tied = scores == value
        ranks[tied] = ranks[tied].mean()
    positives = labels == 1
    n_pos, n_neg = int(positives.sum()), int((~positives).sum())
    return float((ranks[positives].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def main():
    args = common.parse_arguments(__doc__, "train_cpu.yaml")
    settings = common.read_settings(args.config)
    processes = common.Processes()
    nnplug.init(config=args.config, backend=args.backend)
    train_settings = settings["train"]
    epochs = args.epochs if args.epochs is not None else train_settings["epochs"]
    torch.manual_seed(train_settings["seed"])

    features, labels = common.load_csv(common.find_data(args.config, settings["data"]["path"]))
    labels = labels.float()
    train_rows, test_rows = common.stratified_split(labels, 2, settings["data"]["test_fraction"],
                                                    train_settings["seed"])
    features = common.standardize(features, train_rows)
    x_train, y_train, x_test, y_test = features[train_rows], labels[train_rows], features[test_rows], labels[test_rows]

    w0, w1 = class_weights(train_settings.get("class_weights", "none"), y_train)
    pos_weight = train_settings.get("pos_weight", "none")
    if pos_weight == "balanced":
        pos_weight = float((y_train == 0).sum() / (y_train == 1).sum())
    pos_weight = None if pos_weight == "none" else torch.tensor([float(pos_weight)])
    with_logits = settings.get("loss", "bce_with_logits") == "bce_with_logits"
    # Summed over the rows: the training loop divides by the batch's row count.
    if with_logits:
        loss_fn = nt.BCEWithLogitsLoss(pos_weight=pos_weight, reduction="sum")
    else:  # BCE has no pos_weight: it multiplies the positives' sample weights (the same loss for 0/1 labels)
        loss_fn = nt.BCELoss(reduction="sum")
        w1 *= float(pos_weight) if pos_weight is not None else 1.0
    sample_weights = torch.where(y_train == 1, torch.tensor(w1), torch.tensor(w0))

    model = common.build_model(settings, features.shape[1], 1, None if with_logits else torch.nn.Sigmoid())
    common.initialize(model, train_settings["seed"])
    optimizer = common.build_optimizer(settings, model)
    if processes.rank == 0:
        print(f"nnplug backend {nnplug.backend()}; {processes.size} process(es); {len(y_train)} training rows, "
              f"{len(y_test)} test rows, loss {type(loss_fn).__name__}", flush=True)

    def loss_of_rows(network, rows):
        loss_fn.weight = sample_weights[rows]  # the module's weight buffer, per batch
        return loss_fn(network(x_train[rows]).squeeze(1), y_train[rows])

    common.train(processes, processes.wrap(model), optimizer, loss_of_rows, len(y_train), settings, epochs,
                 no_sync=args.no_sync)

    agree = processes.parameters_agree(model)
    status = 0 if agree else 1
    if processes.rank == 0:
        with torch.no_grad():
            scores = model(x_test).squeeze(1)
            probabilities = torch.sigmoid(scores) if with_logits else scores
            loss_fn.weight = torch.where(y_test == 1, torch.tensor(w1), torch.tensor(w0))  # as nnplug_train's
            test_loss = loss_fn(scores, y_test) / len(y_test)
        correct = int(((probabilities >= 0.5).float() == y_test).sum())
        accuracy = correct / len(y_test)
        print(f"Test accuracy: {100 * accuracy:.2f}% ({correct} of {len(y_test)}), "
              f"ROC AUC {roc_auc(probabilities, y_test):.4f}, test loss {float(test_loss):.4f}", flush=True)
        if processes.distributed:
            print(f"parameters {'identical' if agree else 'DIFFERENT'} on the {processes.size} processes",
                  flush=True)
        status = status if math.isfinite(float(test_loss)) else 1
    processes.finish()
    nnplug.finalize()
    return status

if __name__ == "__main__":
    sys.exit(main())
