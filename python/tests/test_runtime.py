"""nnplug.init chooses the backend as aclInit does: a config file, a name, the environment."""

import os

import pytest

import nnplug
from conftest import REPO, run_python


def test_backend_is_the_one_the_environment_names():
    assert nnplug.backend() == os.environ.get("NNPLUG_BACKEND", "cpu_tbb")


@pytest.mark.parametrize("config, backend, soc", [
    ("configs/atlas_emu_910b.yaml", "atlas_emu", "Ascend910B"),
    ("configs/train_cpu.yaml", "cpu_tbb", "CPU"),
    ("configs/atlas_emu_310p.yaml", "atlas_emu", "Ascend310P"),
])
def test_config_file_chooses_the_backend(config, backend, soc):
    code = ("import nnplug; from nnplug import _nnplug\n"
            f"nnplug.init(config={os.path.join(REPO, config)!r})\n"
            "print(nnplug.backend(), _nnplug.soc_name(), _nnplug.device_memory_is_host())")
    result = run_python(code, {"NNPLUG_BACKEND": "", "NNPLUG_CONFIG": ""})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [backend, soc, str(backend == "cpu_tbb")]


def test_backend_argument_overrides_the_config_and_leaves_the_environment():
    code = ("import os, nnplug; from nnplug import _nnplug\n"
            f"nnplug.init(config={os.path.join(REPO, 'configs/atlas_emu_910b.yaml')!r}, backend='cpu_tbb')\n"
            "print(nnplug.backend(), _nnplug.soc_name(), repr(os.environ.get('NNPLUG_BACKEND')))\n"
            "nnplug.finalize(); nnplug.init(backend='atlas_emu'); print(nnplug.backend(), _nnplug.soc_name())")
    result = run_python(code, {"NNPLUG_BACKEND": "", "NNPLUG_CONFIG": ""})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["cpu_tbb", "CPU", "''", "atlas_emu", "Ascend910B"]


def test_nnplug_config_environment_variable_is_read_on_first_use():
    code = ("import torch, nnplug, nnplug.torch as nt\n"
            "nt.binary_cross_entropy(torch.rand(3), torch.rand(3)); print(nnplug.backend())")
    config = os.path.join(REPO, "configs/atlas_emu_910b.yaml")
    result = run_python(code, {"NNPLUG_BACKEND": "", "NNPLUG_CONFIG": config})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["atlas_emu"]


def test_a_bad_config_is_an_error_with_the_runtimes_message(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("backnd: cpu_tbb\n")
    code = ("import nnplug\n"
            f"try:\n    nnplug.init(config={str(bad)!r})\n"
            "except nnplug.Error as e:\n    print(e.status, 'backend' in str(e), nnplug.backend())\n"
            "nnplug.init(backend='cpu_tbb'); print(nnplug.backend())")
    result = run_python(code, {"NNPLUG_BACKEND": "", "NNPLUG_CONFIG": ""})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["100006", "True", "None", "cpu_tbb"]


def test_losses_run_again_after_the_runtime_is_made_anew():
    # Each thread keeps a stream across calls; one made under a finalized runtime is gone and
    # must not be used, in the calling thread or in one that ran before the finalize.
    code = ("import threading, torch, nnplug, nnplug.torch as nt, torch.nn.functional as F\n"
            "x, y = torch.rand(64), torch.rand(64)\n"
            "def check(): assert torch.allclose(nt.mse_loss(x, y), F.mse_loss(x, y))\n"
            "worker_ready, worker_go = threading.Event(), threading.Event()\n"
            "def worker(): check(); worker_ready.set(); worker_go.wait(); check()\n"
            "thread = threading.Thread(target=worker); thread.start(); worker_ready.wait()\n"
            "for backend in ['cpu_tbb', 'atlas_emu', 'atlas_emu', 'cpu_tbb']:\n"
            "    check(); nnplug.finalize(); nnplug.init(backend=backend); check()\n"
            "worker_go.set(); thread.join(); print(nnplug.backend())")
    result = run_python(code, {"NNPLUG_BACKEND": "", "NNPLUG_CONFIG": ""})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["cpu_tbb"]
