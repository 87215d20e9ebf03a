"""The PyTorch training example reaches nnplug_train's accuracy on the backend under test."""

import os
import re

from conftest import REPO, run_python

CONFIGS = {"cpu_tbb": "configs/train_cpu.yaml", "atlas_emu": "configs/train_atlas_910b.yaml"}


def test_torch_example_reaches_the_accuracy_of_nnplug_train(runtime):
    script = os.path.join(REPO, "examples/torch_train/train_breast_cancer.py")
    config = os.path.join(REPO, CONFIGS.get(runtime, CONFIGS["cpu_tbb"]))
    code = f"import sys, runpy; sys.argv = ['train', '--config', {config!r}, '--backend', {runtime!r}]\n" \
           f"runpy.run_path({script!r}, run_name='__main__')"
    result = run_python(code, {"NNPLUG_BACKEND": "", "NNPLUG_CONFIG": ""})
    assert result.returncode == 0, result.stderr
    assert f"nnplug backend {runtime};" in result.stdout
    accuracy = re.search(r"Test accuracy: ([0-9.]+)% \((\d+) of 113\)", result.stdout)
    assert accuracy, result.stdout
    assert int(accuracy.group(2)) >= 109, result.stdout  # nnplug_train: 110 of 113; at least 96%
