"""What differs between TensorFlow generations below Keras: ``TFCompat``.

The execution mode (TF 1.x graph by default, TF 2 eager), ``tf.function``
and the keyword that asks it for XLA, tracing counts, ``tf.data``'s
AUTOTUNE, TF1-style graphs and Sessions, and what this TF was built with
and sees (GPUs, CUDA, oneDNN). ``compat.Compat`` adds the Keras generations
on top; ``backend.BackendCompat`` answers these questions for a cell without
TensorFlow. Features are detected where possible; versions are compared only
for behaviour that cannot be detected.
"""
from __future__ import annotations

import inspect
import os
import re
from typing import Any, Dict, List, Optional, Tuple

from .definitions import NotApplicable


def parse_version(text: str) -> Tuple[int, int, int]:
    """'2.15.0.post1' -> (2, 15, 0); '2.0.0-rc1' -> (2, 0, 0)."""
    nums = [int(n) for n in re.findall(r"\d+", text)[:3]]
    while len(nums) < 3:
        nums.append(0)
    return nums[0], nums[1], nums[2]


class TFCompat:
    """TensorFlow generation knowledge for one worker process."""

    def __init__(self, tf: Any) -> None:
        self.tf = tf
        self.version = parse_version(tf.__version__)
        self.tf1 = self.version[0] < 2

    # -- execution mode --------------------------------------------------

    def enter_mode(self, mode: str) -> None:
        """Switch the process to ``mode`` before any op exists."""
        tf = self.tf
        if mode == "eager" and self.tf1:
            tf.compat.v1.enable_eager_execution()
        elif mode == "graph" and not self.tf1:
            tf.compat.v1.disable_eager_execution()
            # TF 2.3+ graph mode: gradients of a while loop (LSTM) fed from
            # tf.data fail with "Connecting to invalid output N of source node
            # .../while" unless control flow keeps its intermediates, as TF's
            # own error message advises. Only graphs with control flow change.
            keep = getattr(getattr(tf.compat.v1, "experimental", None), "output_all_intermediates", None)
            if keep is not None:
                keep(True)
        if tf.executing_eagerly() != (mode == "eager"):
            raise RuntimeError("could not enter %s mode (executing_eagerly=%s)" % (mode, tf.executing_eagerly()))

    def eager(self) -> bool:
        return bool(self.tf.executing_eagerly())

    def require_tf(self, what: str) -> None:
        """Nothing here: every Compat has TensorFlow (``backend.BackendCompat`` has not)."""

    def require_eager(self, what: str) -> None:
        if not self.eager():
            raise NotApplicable("%s needs eager execution; in graph mode it only builds symbolic ops" % what)

    # -- tf.function / XLA -----------------------------------------------

    def has_tf_function(self) -> bool:
        return hasattr(self.tf, "function")

    def jit_argument(self) -> Optional[str]:
        """The tf.function keyword that requests XLA, or None if there is none."""
        if not self.has_tf_function():
            return None
        params = inspect.signature(self.tf.function).parameters
        for name in ("jit_compile", "experimental_compile"):
            if name in params:
                return name
        return None

    def tf_function(self, fn: Any, jit: Optional[bool] = None, what: str = "tf.function") -> Any:
        """``tf.function(fn)`` with XLA on/off/default, spelled as this TF spells it.

        ``jit=None`` leaves the argument out (TF's default, no XLA off TPU).
        """
        if not self.has_tf_function():
            raise NotApplicable("TensorFlow %s has no tf.function" % self.tf.__version__)
        self.require_eager(what)
        if jit is None:
            return self.tf.function(fn)
        name = self.jit_argument()
        if name is None:
            raise NotApplicable(
                "TensorFlow %s's tf.function has no jit_compile/experimental_compile" % self.tf.__version__)
        return self.tf.function(fn, **{name: jit})

    def tracing_count(self, fn: Any) -> Optional[int]:
        """How many graphs ``fn`` (a tf.function) has traced, where TF can say (2.3+)."""
        getter = getattr(fn, "experimental_get_tracing_count", None)
        if getter is None:
            return None
        try:
            return int(getter())
        except Exception:  # pragma: no cover - best effort
            return None

    def tracing_facts(self, fn: Any) -> Dict[str, Any]:
        """``{"tf_tracing_count": n}`` for a record's extra facts, or ``{}`` where TF cannot count."""
        count = self.tracing_count(fn)
        return {} if count is None else {"tf_tracing_count": count}

    # -- results of eager calls --------------------------------------------

    @staticmethod
    def materialize(value: Any) -> Any:
        """Bring a call's result to host memory, so that a timed call waits for it.

        Eager ops run asynchronously on a GPU: a call that returns an
        EagerTensor without reading it would time only the kernel launches.
        """
        if isinstance(value, (list, tuple)):
            return [TFCompat.materialize(v) for v in value]
        if isinstance(value, dict):
            return {k: TFCompat.materialize(v) for k, v in value.items()}
        to_numpy = getattr(value, "numpy", None)
        if to_numpy is not None and callable(to_numpy):
            return to_numpy()
        return value

    # -- tf.data -----------------------------------------------------------

    def autotune(self) -> Any:
        """``tf.data.AUTOTUNE`` (TF 2.4+) or ``tf.data.experimental.AUTOTUNE`` (TF 1.13+)."""
        data = self.tf.data
        for holder in (data, getattr(data, "experimental", None)):
            value = getattr(holder, "AUTOTUNE", None)
            if value is not None:
                return value
        raise NotApplicable("TensorFlow %s's tf.data has no AUTOTUNE" % self.tf.__version__)

    # -- TF1-style graphs and sessions ---------------------------------------

    def require_graph(self, what: str) -> None:
        if self.eager():
            raise NotApplicable("%s needs graph mode (a tf.compat.v1.Session); this process runs eagerly" % what)

    def session(self, graph: Any) -> Any:
        """A ``tf.compat.v1.Session`` on ``graph`` (graph mode only)."""
        self.require_graph("a Session")
        return self.tf.compat.v1.Session(graph=graph)

    def graph_variable(self, value: Any, name: str = "v") -> Tuple[Any, Any, Any]:
        """A non-trainable variable holding ``value`` (numpy) in the default graph.

        Returns (variable, initializer op, feed dict for the initializer). The
        value is fed once through a placeholder instead of being embedded as a
        constant: graphs stay small (a 10000x10000 float64 constant would
        approach the 2 GB GraphDef limit), and Grappler's constant folding
        cannot precompute the timed ops.
        """
        v1 = self.tf.compat.v1
        ph = v1.placeholder(self.tf.as_dtype(value.dtype), shape=value.shape, name=name + "_init")
        var = v1.Variable(ph, trainable=False, name=name)
        return var, var.initializer, {ph: value}

    # -- devices ---------------------------------------------------------

    def list_gpus(self) -> List[str]:
        cfg = self.tf.config
        for lister in (getattr(cfg, "list_physical_devices", None),
                       getattr(getattr(cfg, "experimental", None), "list_physical_devices", None)):
            if lister is not None:
                return [d.name for d in lister("GPU")]
        from tensorflow.python.client import device_lib  # type: ignore  # pragma: no cover

        return [d.name for d in device_lib.list_local_devices() if d.device_type == "GPU"]  # pragma: no cover

    def build_info(self) -> Dict[str, Any]:
        """CUDA/cuDNN this TF was built with (tf.sysconfig.get_build_info, TF 2.3+)."""
        getter = getattr(self.tf.sysconfig, "get_build_info", None)
        info: Dict[str, Any] = {}
        if getter is not None:
            try:
                info = {str(k): (v if isinstance(v, (str, int, float, bool)) else str(v))
                        for k, v in dict(getter()).items()}
            except Exception as e:  # pragma: no cover
                info = {"error": str(e)}
        try:
            info.setdefault("is_built_with_cuda", bool(self.tf.test.is_built_with_cuda()))
        except Exception:  # pragma: no cover
            pass
        return info

    def onednn_enabled(self) -> Optional[bool]:
        """Whether oneDNN custom ops are on (TF_ENABLE_ONEDNN_OPTS; default on for x86 Linux from 2.9)."""
        env = os.environ.get("TF_ENABLE_ONEDNN_OPTS")
        if env is not None:
            return env.strip() not in ("0", "false", "False")
        if self.version >= (2, 9, 0):
            return True
        try:
            from tensorflow.python.framework import test_util  # type: ignore

            return bool(test_util.IsMklEnabled())
        except Exception:
            return None
