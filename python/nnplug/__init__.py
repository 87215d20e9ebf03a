"""nnplug from Python: the runtime (init, backend) and, in nnplug.torch, its losses as
torch autograd functions and modules."""

import os
import threading

from ._error import Error
from . import _nnplug

__all__ = ["Error", "init", "finalize", "backend", "is_initialized"]

_lock = threading.Lock()
_backend = None  # the active backend's name while initialized


def init(config=None, backend=None):
    """Starts the runtime (aclInit) with a backend chosen by `config` (a YAML file path) or
    `backend` (a name, or a path to a plugin .so), which overrides the config's.

    Without either, NNPLUG_CONFIG and NNPLUG_BACKEND choose, else the installed default.
    Raises nnplug.Error when the runtime refuses (e.g. a second init, a bad config)."""
    global _backend
    with _lock:
        if _backend is not None:
            raise Error(100002, "nnplug.init: the runtime is already initialized with backend "
                        f"'{_backend}' (call nnplug.finalize() first)")
        config = os.fspath(config) if config is not None else None
        saved = os.environ.get("NNPLUG_BACKEND")
        if backend is not None:
            os.environ["NNPLUG_BACKEND"] = backend
        try:
            _nnplug.init(config)
            try:
                _backend = _resolve_backend_name(config)
            except BaseException as error:
                # The runtime started: put the process back as it was, init callable again.
                _nnplug.finalize()
                if isinstance(error, Error):
                    raise
                raise Error(500000, f"nnplug.init: {error}") from error
        finally:
            if backend is not None:
                if saved is None:
                    del os.environ["NNPLUG_BACKEND"]
                else:
                    os.environ["NNPLUG_BACKEND"] = saved


def finalize():
    """Stops the runtime (aclFinalize); init may be called again afterwards."""
    global _backend
    with _lock:
        _nnplug.finalize()
        _backend = None


def is_initialized():
    return _backend is not None


def backend():
    """The active backend's name (as the config or NNPLUG_BACKEND names it); None before init."""
    return _backend


def ensure_initialized():
    """Initializes from the environment (NNPLUG_CONFIG, NNPLUG_BACKEND) on first use."""
    if _backend is not None:
        return
    try:
        init()
    except Error:
        if _backend is None:  # not another thread's init that came first
            raise


def _resolve_backend_name(config):
    # The same order aclInit follows: NNPLUG_BACKEND, the config's `backend`, the built-in cpu_tbb.
    name = os.environ.get("NNPLUG_BACKEND")
    if name:
        return name
    path = config or os.environ.get("NNPLUG_CONFIG") or _nnplug.default_config_path()
    if path and os.path.isfile(path):
        settings = _read_config(path)
        if isinstance(settings, dict) and settings.get("backend"):
            return str(settings["backend"])
    return "cpu_tbb"


def _read_config(path):
    """The config as aclInit read it, or None: whatever the runtime accepts (a tag it does
    not know under `application:`, bytes that are not UTF-8 in a comment) is read here too."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    def untagged(loader, suffix, node):
        if isinstance(node, yaml.MappingNode):
            return loader.construct_mapping(node)
        if isinstance(node, yaml.SequenceNode):
            return loader.construct_sequence(node)
        return loader.construct_scalar(node)

    Loader.add_multi_constructor("", untagged)
    with open(path, "rb") as f:
        text = f.read().decode("utf-8", errors="replace")
    try:
        return yaml.load(text, Loader=Loader)
    except yaml.YAMLError:
        return None
