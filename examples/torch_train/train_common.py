"""What the PyTorch training examples share with nnplug_train: its YAML settings, data
files, random streams, stratified split, standardization, initialization and batch order,
and a training loop that runs in one process or data-parallel under torch.distributed.

A run launched by torchrun (`python3 -m torch.distributed.run`; the launcher sets RANK and
WORLD_SIZE) joins a gloo process group and wraps the model in DistributedDataParallel.
Every process draws the same batches; each takes a contiguous run of every batch's rows,
as nnplug_train's MPI ranks do, and its loss is the sum over its rows divided by the
global batch size and multiplied by the number of processes: DDP's average of the
processes' gradients is then the gradient of the global batch's mean loss, whatever the
shares' sizes, and the run follows the one-process trajectory up to float32 rounding.
"""

import argparse
import datetime
import math
import os
import sys

import torch
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIGS = os.path.join(HERE, "..", "..", "configs")
MASK = (1 << 64) - 1


def parse_arguments(doc, default_config):
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--config", default=os.path.join(CONFIGS, default_config),
                        help=f"nnplug's YAML config with an application: section (default: {default_config})")
    parser.add_argument("--backend", help="run the loss on this backend instead of the config's")
    parser.add_argument("--epochs", type=int, help="override train.epochs")
    parser.add_argument("--no-sync", action="store_true",
                        help="under torch.distributed, skip DDP's gradient all-reduce (the processes then "
                             "train apart; for showing what the all-reduce does)")
    return parser.parse_args()


def read_settings(config_path):
    """The config's `application:` section (the runtime reads the rest)."""
    with open(config_path, encoding="utf-8") as f:
        return yaml.safe_load(f)["application"]


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
    """The sklearn format (header `rows,features,name0,name1,...`) or plain rows of features,
    then the label (0/1 or a class index). Features as float32, labels as float64."""
    with open(path, encoding="utf-8") as f:
        lines = [line.strip() for line in f if line.strip()]
    try:
        [float(v) for v in lines[0].split(",")[:2]]
        header_is_data = len(lines[0].split(",")) == len(lines[1].split(","))
    except ValueError:
        header_is_data = False
    rows = [[float(v) for v in line.split(",")] for line in (lines if header_is_data else lines[1:])]
    table = torch.tensor(rows, dtype=torch.float64)
    return table[:, :-1].float(), table[:, -1]


class RandomStream:
    """nnplug_train's random stream (std::mt19937_64 and its draws), so that these programs
    split the data and initialize the model exactly as nnplug_train does."""

    def __init__(self, seed):
        self.words = [seed & MASK]
        for i in range(1, 312):
            previous = self.words[-1]
            self.words.append((6364136223846793005 * (previous ^ (previous >> 62)) + i) & MASK)
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
        if product & MASK < bound:
            threshold = (-bound) % bound
            while product & MASK < threshold:
                product = self.next() * bound
        return product >> 64

    def shuffle(self, items):
        for i in range(len(items), 1, -1):
            j = self.below(i)
            items[i - 1], items[j] = items[j], items[i - 1]


def _mix(z):  # SplitMix64's output function
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


class _SplitMix:
    """The stream of nnplug_train's epoch order (examples/train/src/epoch_order.cpp)."""

    def __init__(self, seed):
        self.state, self.word, self.half_left = seed, 0, False

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        return _mix(self.state)

    def _half(self):
        self.half_left = not self.half_left
        if self.half_left:
            self.word = self.next()
            return self.word & 0xFFFFFFFF
        return self.word >> 32

    def below(self, bound):  # bound < 2^32: Lemire's method on 32-bit halves
        product = self._half() * bound
        if product & 0xFFFFFFFF < bound:
            threshold = ((1 << 32) - bound) % bound
            while product & 0xFFFFFFFF < threshold:
                product = self._half() * bound
        return product >> 32


def epoch_order(seed, rows):
    """nnplug_train's order of an epoch (Rao-Sandelius): each row to one of 256 buckets, a byte
    of its piece's stream (64 pieces), the buckets one after another (rows in increasing
    order), each bucket shuffled with its own stream."""
    def stream_seed(k):
        return _mix(seed ^ _mix(k + 1))

    buckets = [[] for _ in range(256)]
    for piece in range(64):
        first, last = rows * piece // 64, rows * (piece + 1) // 64
        draws = _SplitMix(stream_seed(256 + piece))
        for row in range(first, last, 8):
            word = draws.next()
            for k in range(min(8, last - row)):
                buckets[word & 0xFF].append(row + k)
                word >>= 8
    order = []
    for b, items in enumerate(buckets):
        stream = _SplitMix(stream_seed(b))
        for i in range(len(items), 1, -1):
            j = stream.below(i)
            items[i - 1], items[j] = items[j], items[i - 1]
        order += items
    return order


class EpochOrders:
    """The epochs' orders of nnplug_train: one draw of its shuffle stream per epoch."""

    def __init__(self, seed, rows):
        self.random, self.rows = RandomStream(seed ^ 0x9E3779B97F4A7C15), rows

    def next(self):
        return epoch_order(self.random.next(), self.rows)


def stratified_split(labels, classes, test_fraction, seed):
    """Indices of the train and test rows, each class split in the same proportion."""
    random = RandomStream(seed ^ 0x0123456789ABCDEF)
    train, test = [], []
    for label in range(classes):
        rows = torch.nonzero(labels == label).flatten().tolist()
        random.shuffle(rows)
        n_test = math.floor(test_fraction * len(rows) + 0.5)
        test += rows[:n_test]
        train += rows[n_test:]
    random.shuffle(train)
    random.shuffle(test)
    return torch.tensor(train), torch.tensor(test)


def standardize(features, train_rows):
    """nnplug_train's standardization: the training split's mean and population standard
    deviation in float64, rounded to float32 and applied in float32 (a constant feature's
    scale is 1)."""
    train = features[train_rows].double()
    mean = train.mean(0)
    scale = ((train - mean) ** 2).mean(0).sqrt().float()
    scale = torch.where(scale > 0, scale, torch.ones_like(scale))
    return (features - mean.float()) / scale


def build_model(settings, features, outputs, last=None):
    """The config's model: linear/logistic, or an MLP with ReLU hidden layers."""
    layers, width = [], features
    if settings["model"].get("kind", "linear") == "mlp":
        for hidden in settings["model"].get("hidden") or []:
            layers += [torch.nn.Linear(width, hidden), torch.nn.ReLU()]
            width = hidden
    layers.append(torch.nn.Linear(width, outputs))
    if last is not None:
        layers.append(last)
    return torch.nn.Sequential(*layers)


def initialize(model, seed):
    """nnplug_train's initialization: uniform weights in +-sqrt(6 / fan) in float32 (fan_in +
    fan_out for the output layer), zero biases, drawn layer by layer in row-major [out, in]
    order (torch's layout of a Linear's weight)."""
    random = RandomStream(seed)
    linears = [m for m in model if isinstance(m, torch.nn.Linear)]
    with torch.no_grad():
        for k, layer in enumerate(linears):
            fan = layer.in_features + (layer.out_features if k + 1 == len(linears) else 0)
            limit = float(torch.sqrt(torch.tensor(6.0, dtype=torch.float32) / fan))
            draws = [(2.0 * random.uniform() - 1.0) * limit for _ in range(layer.in_features * layer.out_features)]
            layer.weight.copy_(torch.tensor(draws).view(layer.out_features, layer.in_features))
            layer.bias.zero_()


def build_optimizer(settings, model):
    """torch.optim's Adam or SGD with nnplug_train's settings; weight decay (L2 added to the
    gradient) on the weights only, as nnplug_train does."""
    o = settings["optimizer"]
    decay = o.get("weight_decay", 0.0)
    weights = [p for name, p in model.named_parameters() if name.endswith("weight")]
    biases = [p for name, p in model.named_parameters() if not name.endswith("weight")]
    groups = [{"params": weights, "weight_decay": decay}, {"params": biases, "weight_decay": 0.0}]
    if o["kind"] == "adam":
        return torch.optim.Adam(groups, lr=o["lr"], betas=(o["beta1"], o["beta2"]), eps=o["epsilon"])
    return torch.optim.SGD(groups, lr=o["lr"], momentum=o["momentum"])


class Processes:
    """One process, or this process's place in a torch.distributed run (gloo) that torchrun
    started: its rank, the number of processes, and collective sums."""

    def __init__(self):
        self.distributed = "RANK" in os.environ and "WORLD_SIZE" in os.environ
        if self.distributed:
            import torch.distributed as dist

            self.dist = dist
            dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=120))
            self.rank, self.size = dist.get_rank(), dist.get_world_size()
        else:
            self.rank, self.size = 0, 1

    def wrap(self, model):
        """The model as the training steps call it: DistributedDataParallel across processes."""
        if not self.distributed:
            return model
        return torch.nn.parallel.DistributedDataParallel(model)

    def share(self, rows):
        """This process's contiguous run of a batch's rows."""
        n = len(rows)
        return rows[n * self.rank // self.size:n * (self.rank + 1) // self.size]

    def sum(self, value):
        if not self.distributed:
            return value
        total = torch.tensor([value], dtype=torch.float64)
        self.dist.all_reduce(total)
        return float(total)

    def gather(self, value):
        """Every process's value, by rank."""
        if not self.distributed:
            return [value]
        values = [torch.zeros(1, dtype=torch.float64) for _ in range(self.size)]
        self.dist.all_gather(values, torch.tensor([value], dtype=torch.float64))
        return [float(v) for v in values]

    def parameters_agree(self, model):
        """Whether every process holds the same parameters, bit for bit."""
        if not self.distributed:
            return True
        flat = torch.cat([p.detach().flatten() for p in model.parameters()])
        gathered = [torch.empty_like(flat) for _ in range(self.size)]
        self.dist.all_gather(gathered, flat)
        return all(torch.equal(gathered[0], g) for g in gathered[1:])

    def finish(self):
        if self.distributed:
            self.dist.barrier()
            self.dist.destroy_process_group()


def train(processes, model, optimizer, loss_of_rows, train_rows, settings, epochs, no_sync=False):
    """nnplug_train's loop: each epoch visits the training rows in its order, in batches of
    train.batch_size; `loss_of_rows(model, rows)` is the summed loss of the given rows (an
    index tensor) with `model` (the DDP wrapper in a distributed run). The step's gradient
    is the gradient of the batch's mean loss. Returns each epoch's mean train loss."""
    batch = settings["train"]["batch_size"]
    orders = EpochOrders(settings["train"]["seed"], train_rows)
    history = []
    for epoch in range(1, epochs + 1):
        order = orders.next()
        total, own_rows = 0.0, 0
        for start in range(0, train_rows, batch):
            rows = order[start:start + batch]
            mine = torch.tensor(processes.share(rows), dtype=torch.long)
            optimizer.zero_grad()
            if no_sync and processes.distributed:
                with model.no_sync():
                    loss = loss_of_rows(model, mine)
                    (loss * (processes.size / len(rows))).backward()
            else:
                loss = loss_of_rows(model, mine)
                (loss * (processes.size / len(rows))).backward()
            optimizer.step()
            total += float(loss)
            own_rows += len(mine)
        history.append(processes.sum(total) / train_rows)
        if processes.rank == 0:
            print(f"epoch {epoch:3d}  train loss {history[-1]:.6f}", flush=True)
    shares = processes.gather(own_rows)
    if processes.rank == 0 and processes.distributed:
        print(f"training rows of an epoch by process: {', '.join(str(int(n)) for n in shares)}", flush=True)
    return history
