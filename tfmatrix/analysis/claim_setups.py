"""The configurations a claim is answered at (``Setup``), and each Keras 3 framework's own answer.

A claim names the configuration the seed measured (TF's ``tf.matmul``,
``tf.function``, ...). A Keras 3 cell on JAX or PyTorch has no TensorFlow, so
the suite asks the same question of that framework (``api=backend`` variants,
``suite/frameworks.py``): ``BACKEND_ANSWERS`` says, per claim, which variants
answer it there and what they are called on each framework, and
``on_backends`` turns a row into one ``Setup`` per framework. Such a setup
applies only to cells of its backend, and its line says whose answer it is
("answered with jax.jit on this JAX cell"), never passing it off as TF's.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .cells import FRAMEWORKS, CellResult
from .findings import Compare, ParamSpec, param_spec

TF_CELLS = ("tensorflow",)          # a claim's TF setup where JAX/PyTorch cells answer with their own (``on_backends``)


@dataclass(frozen=True)
class Setup:
    """One configuration a claim is measured at: the seed's own first, then stand-ins (with why)."""

    compare: Compare                # ``compare.backends``: only cells on those frameworks (their own answer)
    standin: str = ""               # "" for the seed's configuration

    def applies(self, cell: CellResult) -> bool:
        return self.compare.applies(cell)


def setup(benchmarks: tuple[str, ...], a: ParamSpec, b: ParamSpec, standin: str = "",
          backends: tuple[str, ...] = ()) -> Setup:
    return Setup(Compare(benchmarks, param_spec(**a), param_spec(**b), backends), standin)


@dataclass(frozen=True)
class BackendAnswer:
    """A claim's question on JAX and PyTorch: the sides (``api``, unless a side names its own) and names.

    ``api``: ``backend`` for the framework's own ops (``jnp``, ``torch``);
    ``keras`` for a question about Keras itself (``predict`` after
    ``compile``, ``fit`` against ``train_on_batch``), which Keras 3 asks of
    every backend with the same calls the seed made of tf.keras.
    """

    benchmarks: tuple[str, ...]
    a: ParamSpec
    b: ParamSpec
    how: Mapping[str, str]          # backend -> what answers there, for the line's label
    api: str = "backend"


# ---------------------------------------------------------------------------
# THE TABLE: claim key -> the api=backend variants that answer it on JAX and PyTorch cells.
# ---------------------------------------------------------------------------

BACKEND_ANSWERS: dict[str, BackendAnswer] = {
    "tf_matmul_faster_than_np_dot": BackendAnswer(
        ("tensor_ops.matmul",), dict(impl="matmul", mode="eager"), dict(impl="numpy.dot", api="numpy", mode="eager"),
        {"jax": "jax.numpy.matmul", "torch": "torch.matmul"}),
    "einsum_faster_than_loop": BackendAnswer(
        ("tensor_ops.batched_matmul",), dict(impl="einsum", mode="eager"), dict(impl="loop_stack", mode="eager"),
        {"jax": "jnp.einsum vs a loop of jnp.matmul + jnp.stack",
         "torch": "torch.einsum vs a loop of torch.matmul + torch.stack"}),
    "tf_function_faster_power": BackendAnswer(
        ("graphs.power",), dict(call="compiled"), dict(call="eager"),
        {"jax": "jax.jit vs op-by-op jax.numpy", "torch": "torch.compile vs eager torch"}),
    "predict_slower_after_compile": BackendAnswer(
        ("inference.tiny",), dict(path="predict", stage="compiled", mode="eager"),
        dict(path="predict", stage="uncompiled", mode="eager"),
        {"jax": "Keras 3's predict()", "torch": "Keras 3's predict()"}, api="keras"),
    "call_and_predict_on_batch_fix": BackendAnswer(
        ("inference.tiny",), dict(path=("call", "predict_on_batch"), stage="compiled", mode="eager"),
        dict(path="predict", stage="compiled", mode="eager"),
        {"jax": "Keras 3's model(x), predict_on_batch() and predict()",
         "torch": "Keras 3's model(x), predict_on_batch() and predict()"}, api="keras"),
    "fit_slower_than_train_on_batch": BackendAnswer(
        ("training.answer",), dict(model="small", data="small", loop="fit", input="numpy", mode="eager"),
        dict(model="small", data="small", loop="train_on_batch", input="numpy", mode="eager"),
        {"jax": "Keras 3's fit() and train_on_batch()", "torch": "Keras 3's fit() and train_on_batch()"},
        api="keras"),
    "python_args_retrace": BackendAnswer(
        ("graphs.tracing",), dict(arg="python_distinct", call=("compiled", "compiled_static")),
        dict(arg="tensor", call="compiled"),
        {"jax": "jax.jit: call=compiled traces Python scalars as arguments (its default), call=compiled_static "
                "makes them static (static_argnums=0), as tf.function treats Python arguments",
         "torch": "torch.compile: call=compiled is its default (one recompile, then the value is dynamic), "
                  "call=compiled_static is dynamic=False (a compile per value, up to its recompile limit)"}),
}


def on_backends(key: str) -> tuple[Setup, ...]:
    """The claim ``key`` on each Keras 3 framework without TF: one setup per backend, labelled as its answer."""
    row = BACKEND_ANSWERS[key]
    a = param_spec(**{"api": row.api, **row.a})
    b = param_spec(**{"api": row.api, **row.b})
    return tuple(Setup(Compare(row.benchmarks, a, b, backends=(backend,)),
                       f"answered with {answer} on this {FRAMEWORKS[backend]} cell (no TensorFlow)")
                 for backend, answer in row.how.items())
