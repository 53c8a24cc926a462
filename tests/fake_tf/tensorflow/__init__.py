"""A stand-in ``tensorflow`` for fast tests of the suite's error paths only.

It provides just what ``suite.worker`` and ``suite.fingerprint`` touch before
a benchmark runs. Every feature is also exercised with real TensorFlow in the
cell tests; this fake only lets crash/timeout handling be tested in seconds.
"""
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
config = types.SimpleNamespace(list_physical_devices=lambda kind: [])
sysconfig = types.SimpleNamespace(get_build_info=lambda: {"is_cuda_build": False})
test = types.SimpleNamespace(is_built_with_cuda=lambda: False)
version = types.SimpleNamespace(GIT_VERSION="fake")
