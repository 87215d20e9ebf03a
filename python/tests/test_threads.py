"""Several Python threads at once, and the GIL released while an op runs."""

import sys
import threading
import time

import pytest
import torch

import nnplug.torch as nt
from nnplug import _nnplug
from reference import raw


def test_threads_get_the_results_of_one_thread():
    g = torch.Generator().manual_seed(4)
    cases = []
    for i in range(6):
        x = torch.randn(257 + 31 * i, 9, generator=g)
        y = torch.rand(257 + 31 * i, 9, generator=g)
        cases.append((x, y))

    def run(x, y):
        leaf = x.clone().requires_grad_(True)
        loss = nt.binary_cross_entropy_with_logits(leaf, y, pos_weight=torch.tensor(2.0))
        loss.backward()
        return loss.detach(), leaf.grad

    expected = [run(x, y) for x, y in cases]
    failures = []

    def worker(k):
        try:
            for rounds in range(30):
                i = (k + rounds) % len(cases)
                loss, grad = run(*cases[i])
                if not (torch.equal(loss, expected[i][0]) and torch.equal(grad, expected[i][1])):
                    failures.append((k, rounds, i))
        except Exception as error:  # reported below, with the thread that met it
            failures.append((k, repr(error)))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


@pytest.mark.parametrize("path", ["operator", "generic call"])
def test_the_gil_is_released_while_an_op_runs(path):
    # With a long switch interval a thread holding the GIL keeps it: the counter, which
    # hands the GIL back at every step (sleep(0)), can only move while the main thread
    # waits in a call that let it go.
    x = torch.rand(1 << 23)
    out = torch.empty(())
    described = [raw(x), raw(x), None]
    if path == "operator":  # torch.ops.nnplug.*, through nnplug.torch
        def call():
            nt.binary_cross_entropy(x, x, reduction="sum")
    else:  # nnplug._nnplug.run, by the op's schema
        def call():
            _nnplug.run("aclnnBinaryCrossEntropy", described, 2, raw(out))
    count, stop = [0], threading.Event()

    def counter():
        while not stop.is_set():
            count[0] += 1
            time.sleep(0)

    interval = sys.getswitchinterval()
    thread = threading.Thread(target=counter)
    thread.start()
    sys.setswitchinterval(30)
    try:
        moved = 0
        for _ in range(3):
            before = count[0]
            call()
            moved += count[0] - before
    finally:
        sys.setswitchinterval(interval)
        stop.set()
        thread.join()
    assert moved > 0
