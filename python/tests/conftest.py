"""The backend under test comes from the environment (NNPLUG_BACKEND / NNPLUG_CONFIG), as
CTest sets it once per backend."""

import os
import sys

import pytest

import nnplug

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="session", autouse=True)
def runtime():
    nnplug.init()
    yield nnplug.backend()
    nnplug.finalize()


def run_python(code, env=None):
    """Runs `code` in a fresh interpreter with this one's sys.path; returns the process."""
    import subprocess

    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    environment.update(env or {})
    return subprocess.run([sys.executable, "-c", code], env=environment, capture_output=True, text=True,
                          timeout=120)
