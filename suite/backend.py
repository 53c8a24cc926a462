"""Keras 3 on JAX or PyTorch: the worker's view of a cell without TensorFlow.

A ``backend = "jax"``/``"torch"`` cell (``KERAS_BACKEND`` is set in its image)
installs Keras 3 and the backend only. Its worker never imports TensorFlow:
``BackendCompat`` stands in for ``compat.Compat`` and answers every TF-only
question (tf.keras, tf.function, tf.data, Sessions) with ``NotApplicable``, so
the Keras-level benchmarks run unchanged and the rest are n/a with the reason.
``facts`` is the fingerprint of such a cell: the backend, its version, the
devices it sees, and whether TensorFlow got imported anyway (it must not).
"""
from __future__ import annotations

import os
import shutil
import sys
from typing import Any, Dict, List, Optional

from .compat import Compat, KerasHandle
from .definitions import NotApplicable
from .frameworks import needs_tensorflow, no_tf


def cell_backend(environ: Optional[Dict[str, str]] = None) -> str:
    """The Keras backend this cell was built for (``KERAS_BACKEND``; TensorFlow when unset)."""
    env = os.environ if environ is None else environ
    return (env.get("KERAS_BACKEND") or "tensorflow").strip().lower()


def tf_imported() -> bool:
    return "tensorflow" in sys.modules


class BackendCompat(Compat):
    """``Compat`` for a Keras 3 cell on JAX or PyTorch: eager only, Keras 3 only, no TensorFlow."""

    def __init__(self, backend: str) -> None:   # no super().__init__: there is no tf to inspect
        self.tf = None
        self.backend = backend
        self.version = (0, 0, 0)
        self.tf1 = False
        self._keras: Dict[str, KerasHandle] = {}

    def enter_mode(self, mode: str) -> None:
        if mode != "eager":
            raise RuntimeError("Keras 3 on %s runs eagerly only (no graph mode)" % self.backend)

    def eager(self) -> bool:
        return True

    def require_tf(self, what: str) -> None:
        raise NotApplicable(needs_tensorflow(what, self.backend))

    def keras(self, api: str, check_mode: bool = True) -> KerasHandle:
        if api == "tf.keras":
            raise NotApplicable("tf.keras needs TensorFlow; %s (its variants run as api=keras)"
                                % no_tf(self.backend))
        return super().keras(api, check_mode)

    def _standalone_keras(self) -> KerasHandle:
        import keras  # type: ignore

        return KerasHandle(keras, "keras 3 (%s)" % self.backend, str(keras.__version__), "keras")

    def has_tf_function(self) -> bool:
        return False

    def tf_function(self, fn: Any, jit: Optional[bool] = None, what: str = "tf.function") -> Any:
        raise NotApplicable("%s is TensorFlow's; %s" % (what, no_tf(self.backend)))

    def autotune(self) -> Any:
        self.require_tf("tf.data")

    def session(self, graph: Any) -> Any:
        self.require_tf("a Session")

    @staticmethod
    def materialize(value: Any) -> Any:
        """The result on the host as numpy: waits for JAX's async dispatch, detaches torch tensors."""
        if isinstance(value, (list, tuple)):
            return [BackendCompat.materialize(v) for v in value]
        if isinstance(value, dict):
            return {k: BackendCompat.materialize(v) for k, v in value.items()}
        from keras import ops  # type: ignore

        return ops.convert_to_numpy(value)

    def list_gpus(self) -> List[str]:
        return [d for d in devices(self.backend) if not d.lower().startswith("cpu")]

    def build_info(self) -> Dict[str, Any]:
        return {}

    def onednn_enabled(self) -> Optional[bool]:
        return None

    def compile_unavailable(self) -> Optional[str]:
        """Why ``jit_compile=True`` cannot work here, or None (torch.compile's inductor needs a C++ compiler)."""
        if self.backend == "torch" and not any(shutil.which(c) for c in ("g++", "c++", "gcc", "cc", "clang")):
            return ("torch.compile (inductor) builds C++ kernels on the CPU and the cell has no C++ compiler "
                    "(the slim Python image ships none)")
        return None


def devices(backend: str) -> List[str]:
    """What the backend itself sees: ``jax.devices()``, or torch's CPU plus each CUDA device."""
    if backend == "jax":
        import jax  # type: ignore

        return ["%s:%d %s" % (d.platform, d.id, getattr(d, "device_kind", "")) for d in jax.devices()]
    if backend == "torch":
        import torch  # type: ignore

        found = ["cpu"]
        if torch.cuda.is_available():
            found += ["cuda:%d %s" % (i, torch.cuda.get_device_name(i)) for i in range(torch.cuda.device_count())]
        return found
    return []


def backend_version(backend: str) -> str:
    module = __import__(backend)
    return str(getattr(module, "__version__", "?"))


def facts(compat: BackendCompat) -> Dict[str, Any]:
    """The fingerprint of a jax/torch cell, in the TF fingerprint's shape where the keys mean the same."""
    import keras  # type: ignore
    import numpy

    from .fingerprint import installed_packages

    gpus: List[str] = []
    gpu_error = None
    seen: List[str] = []
    try:
        seen = devices(compat.backend)
        gpus = [d for d in seen if not d.lower().startswith("cpu")]
    except Exception as e:  # pragma: no cover - depends on the driver
        gpu_error = str(e)
    handles: Dict[str, Any] = {}
    for api in ("tf.keras", "keras"):
        try:
            handles[api] = compat.keras(api, check_mode=False).describe()
        except Exception as e:
            handles[api] = {"api": api, "unavailable": str(e)}
    return {
        "tensorflow": None,
        "backend": {"name": str(keras.backend.backend()), "version": backend_version(compat.backend),
                    "devices": seen, "requested": compat.backend},
        "tensorflow_imported": tf_imported(),
        "keras": handles,
        "numpy": numpy.__version__,
        "threads": {},
        "build_info": {},
        "gpus_visible": gpus,
        "gpu_error": gpu_error,
        "onednn": None,
        "packages": installed_packages(),
    }
