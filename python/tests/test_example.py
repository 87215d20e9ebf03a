"""The PyTorch training examples reach nnplug_train's accuracy on the backend under test, in
one process and data-parallel on 2 processes (torch.distributed, gloo on loopback)."""

import os
import re
import socket
import subprocess
import sys

import pytest

from conftest import REPO, run_python

CONFIGS = {"cpu_tbb": "configs/train_cpu.yaml", "atlas_emu": "configs/train_atlas_910b.yaml"}
DIGITS = os.path.join(REPO, "examples/torch_train/train_digits.py")
DIGITS_CONFIG = os.path.join(REPO, "configs/train_digits.yaml")
# The backend comes from --backend alone.
NO_BACKEND_ENV = {"NNPLUG_BACKEND": "", "NNPLUG_CONFIG": ""}


def run_script(script, arguments):
    code = f"import sys, runpy; sys.argv = ['train'] + {arguments!r}\nrunpy.run_path({script!r}, run_name='__main__')"
    return run_python(code, NO_BACKEND_ENV)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_distributed(script, arguments, log_dir, processes=2):
    """The launch docs/python.md shows: Debian's torch 1.13 launcher needs --redirects and
    --tee on Python 3.11 (without them it fails before starting a process)."""
    command = [sys.executable, "-m", "torch.distributed.run", f"--nproc_per_node={processes}",
               "--master_addr", "127.0.0.1", "--master_port", str(free_port()), "--redirects", "2", "--tee", "2",
               "--monitor_interval", "0.2", "--log_dir", str(log_dir), script] + arguments
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p), GLOO_SOCKET_IFNAME="lo",
                       **NO_BACKEND_ENV)
    return subprocess.run(command, env=environment, capture_output=True, text=True, timeout=120)


def curve(stdout):
    return [float(loss) for loss in re.findall(r"^epoch +\d+  train loss ([0-9.]+)$", stdout, re.MULTILINE)]


def accuracy(stdout, rows):
    found = re.search(rf"^Test accuracy: ([0-9.]+)% \((\d+) of {rows}\), test loss ([0-9.]+)$", stdout, re.MULTILINE)
    assert found, stdout
    return int(found.group(2)), float(found.group(3))


def test_torch_example_reaches_the_accuracy_of_nnplug_train(runtime):
    script = os.path.join(REPO, "examples/torch_train/train_breast_cancer.py")
    config = os.path.join(REPO, CONFIGS.get(runtime, CONFIGS["cpu_tbb"]))
    result = run_script(script, ["--config", config, "--backend", runtime])
    assert result.returncode == 0, result.stderr
    assert f"nnplug backend {runtime};" in result.stdout
    found = re.search(r"Test accuracy: ([0-9.]+)% \((\d+) of 113\)", result.stdout)
    assert found, result.stdout
    assert int(found.group(2)) >= 109, result.stdout  # nnplug_train: 110 of 113; at least 96%


@pytest.fixture(scope="module")
def digits_one_process(runtime):
    result = run_script(DIGITS, ["--config", DIGITS_CONFIG, "--backend", runtime])
    assert result.returncode == 0, result.stderr
    assert f"nnplug backend {runtime}; 1 process(es);" in result.stdout
    assert "loss CrossEntropyLoss" in result.stdout
    return result.stdout


def test_digits_example_reaches_the_accuracy_of_nnplug_train(digits_one_process):
    correct, test_loss = accuracy(digits_one_process, 359)
    assert correct >= 345, digits_one_process  # at least 96%; nnplug_train: 346 of 359, test loss 0.1074
    losses = curve(digits_one_process)
    assert len(losses) == 30, digits_one_process
    # nnplug_train's first and last epochs (metrics.csv): the same trajectory up to float32 rounding
    assert losses[0] == pytest.approx(0.986118666, rel=1e-5) and losses[-1] == pytest.approx(0.04389038, rel=1e-3)
    assert test_loss == pytest.approx(0.1074, abs=2e-3)


def test_digits_ddp_on_2_processes_follows_the_one_process_run(runtime, digits_one_process, tmp_path):
    result = run_distributed(DIGITS, ["--config", DIGITS_CONFIG, "--backend", runtime], tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"nnplug backend {runtime}; 2 process(es);" in result.stdout
    assert "parameters identical on the 2 processes" in result.stdout
    assert "training rows of an epoch by process: 719, 719" in result.stdout  # each its half of every batch
    # The batches' gradients are all-reduced: every epoch's loss as in one process (float32
    # rounding apart: the processes' gradients are summed in another order), and the same accuracy.
    assert curve(result.stdout) == pytest.approx(curve(digits_one_process), rel=1e-4), result.stdout
    assert accuracy(result.stdout, 359) == accuracy(digits_one_process, 359)


def test_digits_ddp_without_the_all_reduce_is_caught(runtime, digits_one_process, tmp_path):
    """The checks above fail when the processes do not all-reduce their gradients."""
    result = run_distributed(DIGITS, ["--config", DIGITS_CONFIG, "--backend", runtime, "--epochs", "1", "--no-sync"],
                             tmp_path)
    assert result.returncode != 0, result.stdout
    assert "parameters DIFFERENT on the 2 processes" in result.stdout
    losses = curve(result.stdout)
    assert len(losses) == 1 and losses[0] != pytest.approx(curve(digits_one_process)[0], rel=1e-2), result.stdout
