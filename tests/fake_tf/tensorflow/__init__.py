"""A stand-in ``tensorflow`` for fast tests of the suite's error paths only.

It provides just what ``suite.worker`` and ``suite.fingerprint`` touch before
a benchmark runs. Every feature is also exercised with real TensorFlow in the
cell tests; this fake only lets crash/timeout handling be tested in seconds.
"""
import os
import types

__version__ = "2.99.0"
_eager = [True]


def executing_eagerly():
    return _eager[0]


def _disable():
    _eager[0] = False


def _enable():
    _eager[0] = True


compat = types.SimpleNamespace(v1=types.SimpleNamespace(
    enable_eager_execution=_enable, disable_eager_execution=_disable,
    reset_default_graph=lambda: None))
def _devices(kind):
    """``TFMATRIX_FAKE_GPUS=N``: N fake GPUs (an existing environment's GPU path, tested on a machine without one)."""
    n = int(os.environ.get("TFMATRIX_FAKE_GPUS", "0") or 0) if kind == "GPU" else 0
    return [types.SimpleNamespace(name="/physical_device:GPU:%d" % i, device_type="GPU") for i in range(n)]


config = types.SimpleNamespace(list_physical_devices=_devices)
sysconfig = types.SimpleNamespace(get_build_info=lambda: {"is_cuda_build": False})
test = types.SimpleNamespace(is_built_with_cuda=lambda: False)
version = types.SimpleNamespace(GIT_VERSION="fake")
