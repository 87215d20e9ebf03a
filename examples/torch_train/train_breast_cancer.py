#!/usr/bin/env python3
"""The breast-cancer classifier of nnplug_train, written with torch.optim and trained with
nnplug.torch's losses: the loss and its gradient run as aclnn ops on the backend the
config names (the same YAML files: the runtime reads its keys, this program `application:`).

    python3 examples/torch_train/train_breast_cancer.py --config configs/train_atlas_910b.yaml
"""

import argparse
import math
import os
import sys

import torch
import yaml

import nnplug
import nnplug.torch as nt

HERE = os.path.dirname(os.path.abspath(__file__))


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=os.path.join(HERE, "..", "..", "configs", "train_cpu.yaml"),
                        help="nnplug's YAML config with an application: section (default: train_cpu.yaml)")
    parser.add_argument("--backend", help="run the loss on this backend instead of the config's")
    parser.add_argument("--epochs", type=int, help="override train.epochs")
    return parser.parse_args()


def find_data(config_path, relative):
    """data.path relative to the config, then share/nnplug/data, then examples/data."""
    config_dir = os.path.dirname(os.path.abspath(config_path))
    name = os.path.basename(relative)
    for candidate in (os.path.join(config_dir, relative), os.path.join(config_dir, "..", "data", name),
                      os.path.join(HERE, "..", "data", name)):
        if os.path.isfile(candidate):
            return candidate
    sys.exit(f"data file {relative!r} not found beside {config_path}")


def load_csv(path):
    """The sklearn format (header `rows,features,name0,name1`) or plain rows of features, label."""
    with open(path, encoding="utf-8") as f:
        lines = [line.strip() for line in f if line.strip()]
    try:
        [float(v) for v in lines[0].split(",")[:2]]
        header_is_data = len(lines[0].split(",")) == len(lines[1].split(","))
    except ValueError:
        header_is_data = False
    rows = [[float(v) for v in line.split(",")] for line in (lines if header_is_data else lines[1:])]
    table = torch.tensor(rows, dtype=torch.float64)
    return table[:, :-1].float(), table[:, -1].float()


class RandomStream:
    """nnplug_train's random stream (std::mt19937_64 and its draws), so that this program
    splits the data and initializes the model exactly as nnplug_train does."""

    MASK = (1 << 64) - 1

    def __init__(self, seed):
        self.words = [seed & self.MASK]
        for i in range(1, 312):
            previous = self.words[-1]
            self.words.append((6364136223846793005 * (previous ^ (previous >> 62)) + i) & self.MASK)
        self.index = 312

    def next(self):
        if self.index == 312:
            w = self.words
            for i in range(312):
                y = (w[i] & 0xFFFFFFFF80000000) | (w[(i + 1) % 312] & 0x7FFFFFFF)
                w[i] = w[(i + 156) % 312] ^ (y >> 1) ^ (0xB5026F5AA96619E9 if y & 1 else 0)
            self.index = 0
        y = self.words[self.index]
        self.index += 1
        y ^= (y >> 29) & 0x5555555555555555
        y ^= (y << 17) & 0x71D67FFFEDA60000
        y ^= (y << 37) & 0xFFF7EEE000000000
        return y ^ (y >> 43)

    def uniform(self):  # 24 random bits, exact in float
        return (self.next() >> 40) / 16777216.0

    def below(self, bound):  # Lemire's method, without modulo bias
        product = self.next() * bound
        if product & self.MASK < bound:
            threshold = (-bound) % bound
            while product & self.MASK < threshold:
                product = self.next() * bound
        return product >> 64

    def shuffle(self, items):
        for i in range(len(items), 1, -1):
            j = self.below(i)
            items[i - 1], items[j] = items[j], items[i - 1]


def stratified_split(labels, test_fraction, seed):
    """Indices of the train and test rows, each class split in the same proportion."""
    random = RandomStream(seed ^ 0x0123456789ABCDEF)
    train, test = [], []
    for label in (0.0, 1.0):
        rows = torch.nonzero(labels == label).flatten().tolist()
        random.shuffle(rows)
        n_test = math.floor(test_fraction * len(rows) + 0.5)
        test += rows[:n_test]
        train += rows[n_test:]
    random.shuffle(train)
    random.shuffle(test)
    return torch.tensor(train), torch.tensor(test)


def initialize(model, seed):
    """nnplug_train's initialization: uniform weights in +-sqrt(6 / fan) (fan_in + fan_out for
    the output layer), zero biases, drawn layer by layer in row-major [in, out] order."""
    random = RandomStream(seed)
    linears = [m for m in model if isinstance(m, torch.nn.Linear)]
    with torch.no_grad():
        for k, layer in enumerate(linears):
            fan = layer.in_features + (layer.out_features if k + 1 == len(linears) else 0)
            limit = math.sqrt(6.0 / fan)
            draws = [(2.0 * random.uniform() - 1.0) * limit for _ in range(layer.in_features * layer.out_features)]
            layer.weight.copy_(torch.tensor(draws).view(layer.in_features, layer.out_features).t())
            layer.bias.zero_()


def class_weights(setting, labels):
    if setting == "none":
        return 1.0, 1.0
    if setting == "balanced":  # scikit-learn's n / (2 * count of the class)
        n, positives = len(labels), float(labels.sum())
        return n / (2 * (n - positives)), n / (2 * positives)
    return float(setting[0]), float(setting[1])


def build_model(settings, features, with_sigmoid):
    layers, width = [], features
    for hidden in settings["model"].get("hidden") or []:
        layers += [torch.nn.Linear(width, hidden), torch.nn.ReLU()]
        width = hidden
    layers.append(torch.nn.Linear(width, 1))
    if with_sigmoid:
        layers.append(torch.nn.Sigmoid())
    return torch.nn.Sequential(*layers)


def build_optimizer(settings, parameters):
    o = settings["optimizer"]
    if o["kind"] == "adam":
        return torch.optim.Adam(parameters, lr=o["lr"], betas=(o["beta1"], o["beta2"]), eps=o["epsilon"],
                                weight_decay=o.get("weight_decay", 0.0))
    return torch.optim.SGD(parameters, lr=o["lr"], momentum=o["momentum"], weight_decay=o.get("weight_decay", 0.0))


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
    args = parse_arguments()
    with open(args.config, encoding="utf-8") as f:
        settings = yaml.safe_load(f)["application"]
    nnplug.init(config=args.config, backend=args.backend)
    train_settings = settings["train"]
    epochs = args.epochs if args.epochs is not None else train_settings["epochs"]
    torch.manual_seed(train_settings["seed"])
    generator = torch.Generator().manual_seed(train_settings["seed"])

    features, labels = load_csv(find_data(args.config, settings["data"]["path"]))
    train_rows, test_rows = stratified_split(labels, settings["data"]["test_fraction"], train_settings["seed"])
    # fitted on the training split, population standard deviation
    mean, std = features[train_rows].mean(0), features[train_rows].std(0, unbiased=False)
    features = (features - mean) / torch.where(std > 0, std, torch.ones_like(std))
    x_train, y_train, x_test, y_test = features[train_rows], labels[train_rows], features[test_rows], labels[test_rows]

    w0, w1 = class_weights(train_settings.get("class_weights", "none"), y_train)
    pos_weight = train_settings.get("pos_weight", "none")
    if pos_weight == "balanced":
        pos_weight = float((y_train == 0).sum() / (y_train == 1).sum())
    pos_weight = None if pos_weight == "none" else torch.tensor([float(pos_weight)])
    with_logits = settings["loss"] == "bce_with_logits"
    if with_logits:
        loss_fn = nt.BCEWithLogitsLoss(pos_weight=pos_weight)
    else:  # BCE has no pos_weight: it multiplies the positives' sample weights (the same loss for 0/1 labels)
        loss_fn = nt.BCELoss()
        w1 *= float(pos_weight) if pos_weight is not None else 1.0
    sample_weights = torch.where(y_train == 1, torch.tensor(w1), torch.tensor(w0))

    model = build_model(settings, features.shape[1], with_sigmoid=not with_logits)
    initialize(model, train_settings["seed"])
    optimizer = build_optimizer(settings, model.parameters())
    batch = train_settings["batch_size"]
    print(f"nnplug backend {nnplug.backend()}; {len(y_train)} training rows, {len(y_test)} test rows, "
          f"loss {type(loss_fn).__name__}")
    for epoch in range(1, epochs + 1):
        order = torch.randperm(len(y_train), generator=generator)
        total = 0.0
        for start in range(0, len(order), batch):
            rows = order[start:start + batch]
            loss_fn.weight = sample_weights[rows]  # the module's weight buffer, per batch
            optimizer.zero_grad()
            loss = loss_fn(model(x_train[rows]).squeeze(1), y_train[rows])
            loss.backward()
            optimizer.step()
            total += float(loss) * len(rows)
        if epoch == 1 or epoch % 10 == 0 or epoch == epochs:
            print(f"epoch {epoch:3d}  train loss {total / len(y_train):.4f}")

    with torch.no_grad():
        scores = model(x_test).squeeze(1)
        probabilities = torch.sigmoid(scores) if with_logits else scores
        test_loss = nt.binary_cross_entropy(probabilities.clamp(1e-7, 1 - 1e-7), y_test)
    correct = int(((probabilities >= 0.5).float() == y_test).sum())
    accuracy = correct / len(y_test)
    print(f"Test accuracy: {100 * accuracy:.2f}% ({correct} of {len(y_test)}), "
          f"ROC AUC {roc_auc(probabilities, y_test):.4f}, test loss {float(test_loss):.4f}")
    nnplug.finalize()
    return 0 if math.isfinite(float(test_loss)) else 1


if __name__ == "__main__":
    sys.exit(main())
