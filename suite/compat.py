"""What differs between TensorFlow/Keras generations: ``Compat``, the one object a worker asks.

Benchmarks never test versions themselves: they ask ``Compat``, which either
does the thing the way the cell's TF/Keras does it or raises NotApplicable
with a reason a reader of the report understands. Features are detected
(signatures, attributes) where possible; versions are compared only for
behaviour that cannot be detected. This module holds the Keras half (which
package ``tf.keras`` and ``keras`` are, building, compiling, fitting and
calling models); ``suite.tf_compat`` the TensorFlow half it builds on (the
execution mode, tf.function and XLA, tf.data, Sessions, devices).

Generations covered:
  * TF 1.14/1.15: graph by default, ``tf.compat.v1.enable_eager_execution()``
    switches to eager (must happen before any op); standalone Keras 2.2.x
    builds placeholders and cannot run eagerly.
  * TF 2.0-2.15: eager by default, ``tf.compat.v1.disable_eager_execution()``
    switches to graph; tf.keras is bundled (TF <= 2.5) or the ``keras`` 2.x
    package (2.6-2.15); TF 2.0's ``*_on_batch`` run un-traced Python (fixed in
    2.1, seed 000).
  * TF 2.16+: ``tf.keras`` is Keras 3 (no TF1-style graph mode, no
    ``lr=`` argument) unless ``TF_USE_LEGACY_KERAS=1`` selects ``tf_keras``.
"""
from __future__ import annotations

import inspect
from typing import Any, Dict, Optional, Tuple

from .definitions import NotApplicable
from .tf_compat import TFCompat, parse_version


def mode_unsupported(api: str, keras_version: str, tf1: bool, eager: bool) -> Optional[str]:
    """Why a Keras package cannot run in an execution mode, or None.

    Pure, so the parent process can settle whole process groups from the
    fingerprint without starting a worker just to learn they are n/a.
    """
    major = parse_version(keras_version)[0]
    if major >= 3 and not eager:
        return "Keras 3 has no TF1-style graph mode (tf.compat.v1.disable_eager_execution)"
    if api == "keras" and major == 2 and tf1 and eager and parse_version(keras_version) < (2, 3, 0):
        return "standalone keras %s builds tf.placeholder graphs and cannot run with TF1 eager execution" % (
            keras_version)
    return None


class KerasHandle:
    """A Keras implementation usable in this process, and what it is."""

    def __init__(self, module: Any, flavour: str, version: str, api: str) -> None:
        self.module = module          # the package: tf.keras, keras, tf_keras
        self.flavour = flavour        # "tf.keras (bundled)", "keras 2.x", "keras 3", "tf_keras"
        self.version = version
        self.api = api                # "tf.keras" | "keras"
        self.layers = module.layers
        self.models = module.models
        self.optimizers = module.optimizers
        self.backend = module.backend
        self.major = parse_version(version)[0]

    def describe(self) -> Dict[str, str]:
        return {"api": self.api, "flavour": self.flavour, "version": self.version}


class Compat(TFCompat):
    """TF/Keras generation knowledge for one worker process: the Keras half here, TensorFlow's in ``TFCompat``."""

    def __init__(self, tf: Any) -> None:
        super().__init__(tf)
        self._keras: Dict[str, KerasHandle] = {}

    # -- Keras -----------------------------------------------------------

    def tf_keras_flavour(self) -> Tuple[str, str]:
        """What ``tf.keras`` is in this cell: (flavour, version)."""
        tk = self.tf.keras
        root = tk.Model.__module__.split(".")[0]
        version = str(getattr(tk, "__version__", "") or "")
        if root == "tensorflow":
            return "tf.keras (bundled)", version or self.tf.__version__
        if root == "tf_keras":
            import tf_keras  # type: ignore

            return "tf_keras", tf_keras.__version__
        import keras  # type: ignore

        v = str(keras.__version__)
        return ("keras 3" if v.startswith("3") else "keras %s (as tf.keras)" % v), v

    def keras(self, api: str, check_mode: bool = True) -> KerasHandle:
        """The Keras implementation behind ``api`` ("tf.keras" or "keras").

        Raises NotApplicable when there is no such separate package, or (with
        ``check_mode``) when it cannot run in this process's execution mode.
        """
        if api in self._keras:
            handle = self._keras[api]
            if check_mode:
                self._check_mode_support(handle)
            return handle
        if api == "tf.keras":
            flavour, version = self.tf_keras_flavour()
            handle = KerasHandle(self.tf.keras, flavour, version, api)
        elif api == "keras":
            handle = self._standalone_keras()
        else:
            raise ValueError("unknown Keras api %r" % api)
        self._keras[api] = handle
        if check_mode:
            self._check_mode_support(handle)
        return handle

    def _standalone_keras(self) -> KerasHandle:
        try:
            import keras  # type: ignore
        except ImportError:
            raise NotApplicable("no standalone keras package is installed in this cell")
        version = str(keras.__version__)
        if keras.Model is self.tf.keras.Model or keras.Model.__module__.startswith("tensorflow"):
            raise NotApplicable("standalone keras is the same package as tf.keras here (keras %s)" % version)
        from .fingerprint import nightly_keras

        nightly = nightly_keras()
        if nightly:
            # TF 2.5 depends on keras-nightly: the `keras` module is a development
            # snapshot of what became tf.keras in 2.6, not a Keras release (its
            # optimizers module has no Adam), so there is no standalone Keras to compare.
            raise NotApplicable("the keras module here is keras-nightly %s (a dependency of this TF), "
                                "not a standalone Keras release" % nightly)
        flavour = "keras 3" if version.startswith("3") else "keras %s (standalone)" % version
        return KerasHandle(keras, flavour, version, "keras")

    def _check_mode_support(self, k: KerasHandle) -> None:
        reason = mode_unsupported(k.api, k.version, self.tf1, self.eager())
        if reason:
            raise NotApplicable(reason)

    def lstm(self, k: KerasHandle, units: int, **kwargs: Any) -> Any:
        """An LSTM layer with Keras's default initial values, buildable in every mode.

        Standalone keras 2.3.x under TF2 graph mode cannot build its
        ``unit_forget_bias`` initializer (it captures an EagerTensor); the same
        initial bias (zeros, forget gate ones) is given as a constant instead.
        Initial values do not change the work a step does.
        """
        if k.api == "keras" and k.major == 2 and not self.tf1 and not self.eager():
            import numpy as np

            bias = np.concatenate([np.zeros(units), np.ones(units), np.zeros(2 * units)]).astype("float32")
            kwargs = dict(kwargs, unit_forget_bias=False,
                          bias_initializer=k.module.initializers.Constant(bias))
        return k.layers.LSTM(units, **kwargs)

    def adam(self, k: KerasHandle, lr: float) -> Any:
        """Adam with the learning-rate argument this Keras spells (``lr`` vs ``learning_rate``).

        In graph mode, Keras 2.11+'s new optimizers do not work (no
        ``get_updates``): the ``optimizers.legacy`` one is what such code must use.
        """
        cls = k.optimizers.Adam
        legacy = getattr(k.optimizers, "legacy", None)
        if not self.eager() and legacy is not None and hasattr(legacy, "Adam"):
            cls = legacy.Adam
        params = inspect.signature(cls.__init__).parameters
        if "learning_rate" in params:
            return cls(learning_rate=lr)
        return cls(lr=lr)

    def clear_session(self, k: Optional[KerasHandle] = None) -> None:
        handles = [k] if k is not None else list(self._keras.values())
        for h in handles:
            try:
                h.backend.clear_session()
            except Exception:  # pragma: no cover - best effort between variants
                pass
        if not self.eager() and hasattr(self.tf.compat.v1, "reset_default_graph"):
            try:
                self.tf.compat.v1.reset_default_graph()
            except Exception:  # pragma: no cover
                pass

    # -- Keras calls -----------------------------------------------------

    @staticmethod
    def predict(model: Any, x: Any) -> Any:
        """``predict`` without a progress bar (TF 2.9+ prints one by default)."""
        return model.predict(x, verbose=0)

    def fit_numpy(self, model: Any, x: Any, y: Any) -> Any:
        return model.fit(x, y, batch_size=len(x), epochs=1, verbose=0, shuffle=False)

    def fit_dataset(self, k: KerasHandle, model: Any, dataset: Any, steps: int) -> Any:
        if k.api == "keras" and k.major < 3:
            raise NotApplicable("standalone keras %s cannot consume a tf.data.Dataset" % k.version)
        return model.fit(dataset, steps_per_epoch=steps, epochs=1, verbose=0)

    def fit_generator(self, k: KerasHandle, model: Any, gen: Any, steps: int) -> Any:
        """A Python generator / Sequence through ``fit`` (``fit_generator`` before TF 2.1)."""
        fit_takes_generators = (
            k.major >= 3
            or not hasattr(model, "fit_generator")
            or (k.api == "tf.keras" and self.version >= (2, 1, 0))
        )
        if fit_takes_generators:
            return model.fit(gen, steps_per_epoch=steps, epochs=1, verbose=0)
        return model.fit_generator(gen, steps_per_epoch=steps, epochs=1, verbose=0)

    def sequence_base(self, k: KerasHandle) -> Any:
        """The base class for index-able batch sources (``Sequence`` / ``PyDataset``)."""
        utils = k.module.utils
        for name in ("PyDataset", "Sequence"):
            if hasattr(utils, name):
                return getattr(utils, name)
        raise NotApplicable("keras %s has no utils.Sequence" % k.version)

    # -- inputs and outputs of direct calls --------------------------------

    def eager_input(self, k: KerasHandle, x: Any) -> Any:
        """``x`` (numpy) as a direct call (``model(x)``, a tf.function) takes it.

        tf.keras in TF 2 (the V2 dtype behaviour) and Keras 3 cast float64
        inputs to their float32 weights; TF 1.x tf.keras and standalone keras
        2.x do not, and fail with "Incompatible type conversion requested to
        type 'float64' for variable of type 'float32'" or "Input 'b' of
        'MatMul' Op has type float32 that does not match type float64". There
        the same values go in as float32; everywhere else the seed's float64
        array goes in unchanged.
        """
        casts = k.major >= 3 or (k.api == "tf.keras" and not self.tf1)
        if not casts and getattr(x, "dtype", None) is not None and str(x.dtype) == "float64":
            return x.astype("float32")
        return x

    def require_direct_call(self, k: KerasHandle, what: str = "model(x)") -> None:
        """NotApplicable where calling a Keras model directly computes nothing.

        In graph mode the call only adds symbolic ops. Standalone keras 2.x
        builds its layers in its own graph even under TF 2 eager execution:
        ``model(x)`` returns a symbolic tensor of that graph (and refuses numpy
        input). Wrapping the model in tf.function does compute, so that path
        only needs eager execution.
        """
        self.require_eager(what)
        if k.api == "keras" and k.major == 2:
            raise NotApplicable(
                "standalone keras %s: %s builds symbolic tensors in Keras's own graph and computes nothing "
                "(only tf.keras and Keras 3 run a model called on data eagerly)" % (k.version, what))

    # -- Keras extras ------------------------------------------------------

    def application(self, k: KerasHandle, name: str) -> Any:
        """``keras.applications.<name>`` (a model constructor), or NotApplicable."""
        apps = getattr(k.module, "applications", None)
        ctor = getattr(apps, name, None) if apps is not None else None
        if ctor is None:
            raise NotApplicable("%s %s has no keras.applications.%s" % (k.flavour, k.version, name))
        return ctor

    def compile_unavailable(self) -> Optional[str]:
        """Why ``compile(jit_compile=True)`` or the framework's compiler cannot run in this cell, or None.

        Nothing stops XLA in a TensorFlow cell; ``backend.BackendCompat`` says why
        ``torch.compile`` cannot run in a PyTorch cell without a C++ compiler.
        """
        return None

    @staticmethod
    def build_train_function(model: Any, x: Any, y: Any) -> str:
        """Build ``model``'s train function (and optimizer slots) with one ``train_on_batch``.

        Seed 001 called ``model._make_train_function()`` (TF 1.x/2.0 Keras);
        tf.keras 2.2+ renamed it ``make_train_function()`` (the old name lives
        on only in its TF1-mode code) and Keras 3 has neither, while one
        ``train_on_batch`` builds the train function in every generation.
        Returns how it was done, for the record.
        """
        model.train_on_batch(x, y)
        return "train_on_batch"

    @staticmethod
    def fit_arrays(model: Any, x: Any, y: Any, batch_size: int) -> Any:
        """``fit`` over numpy arrays in batches of ``batch_size`` (one epoch, no shuffling)."""
        return model.fit(x, y, batch_size=batch_size, epochs=1, verbose=0, shuffle=False)
