"""Compile time as its own figure: a compiled training step's first call in a fresh process, cold or warm cache.

pytorch/pytorch#154456 (2025-05): "the ``torch.compile`` warmup takes ~10
seconds per input batch size" on a second run, although the disk cache is
written; pytorch/pytorch#172547 (2026-01): a first iteration of 3.36 s with
compilation, 1.03 s with the cache loaded; openxla/xla#23924: a module that
takes minutes to compile. What a user waits for is the first call of a
compiled function in a new process, with the persistent compile cache empty
(cold) or filled by an earlier process (warm).

``compile.cache`` measures exactly that: each sample is a fresh Python
process (``sys.executable``, the cell's own interpreter and environment)
that imports the framework, builds the gradient of an 8-layer MLP's loss
(256 wide, relu, batch 64, float32), and times its first call, which
traces, compiles (or loads the compiled program from the cache) and runs
it; the process reports that time itself (imports are left out) and exits
(``Prepared.self_timed``). The frameworks' own persistent caches:

* JAX: ``jax_compilation_cache_dir`` (every program cached:
  ``jax_persistent_cache_min_compile_time_secs = 0``);
* PyTorch: ``torch.compile`` with ``TORCHINDUCTOR_CACHE_DIR`` (inductor's FX
  graph cache and AOT autograd cache on);
* TensorFlow: ``tf.function(jit_compile=True)`` with
  ``TF_XLA_FLAGS=--tf_xla_persistent_cache_directory`` (XLA's persistent
  cache; used here from TF 2.16).

``cache=cold`` gives every process a new empty directory (the cost of writing
the cache included, as on a first run); ``cache=warm`` one directory that the
variant's first call fills, then read by every sample. Each record keeps its
median as the figure ``compile_s``. The framework is the cell's: ``api=tf``
in a TensorFlow cell, ``api=backend`` on JAX and PyTorch.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from typing import Any, Dict, List

from ..definitions import BACKEND_API, Benchmark, NotApplicable, Prepared, Preset, Variant, make_variant

CACHES = ("cold", "warm")
LAYERS, WIDTH, BATCH = 8, 256, 64
CHILD_TIMEOUT_S = 300.0

# The child's program per framework: argv[1] is the cache directory; it prints {"first_call_s": seconds}.
PROGRAMS = {
    "jax": """
import json, sys, time
import jax, jax.numpy as jnp, numpy as np
jax.config.update("jax_compilation_cache_dir", sys.argv[1])
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
rng = np.random.RandomState(1)
ws = [jnp.asarray(rng.rand({w}, {w}).astype("float32") * 0.1) for _ in range({n})]
x = jnp.asarray(rng.rand({b}, {w}).astype("float32"))
def loss(ws, x):
    for w in ws:
        x = jax.nn.relu(x @ w)
    return (x * x).mean()
step = jax.jit(jax.grad(loss))
t0 = time.perf_counter()
jax.block_until_ready(step(ws, x))
print(json.dumps({{"first_call_s": time.perf_counter() - t0}}))
""",
    "torch": """
import json, sys, time
import numpy as np, torch
rng = np.random.RandomState(1)
ws = [torch.tensor(rng.rand({w}, {w}).astype("float32") * 0.1, requires_grad=True) for _ in range({n})]
x = torch.tensor(rng.rand({b}, {w}).astype("float32"))
def loss(x):
    for w in ws:
        x = torch.relu(x @ w)
    return (x * x).mean()
step = torch.compile(loss)
t0 = time.perf_counter()
step(x).backward()
print(json.dumps({{"first_call_s": time.perf_counter() - t0}}))
""",
    "tensorflow": """
import json, sys, time
import numpy as np, tensorflow as tf
rng = np.random.RandomState(1)
ws = [tf.Variable(rng.rand({w}, {w}).astype("float32") * 0.1) for _ in range({n})]
x = tf.constant(rng.rand({b}, {w}).astype("float32"))
@tf.function(jit_compile=True)
def step(x):
    with tf.GradientTape() as tape:
        h = x
        for w in ws:
            h = tf.nn.relu(tf.matmul(h, w))
        loss = tf.reduce_mean(h * h)
    return tape.gradient(loss, ws)
t0 = time.perf_counter()
[g.numpy() for g in step(x)]
print(json.dumps({{"first_call_s": time.perf_counter() - t0}}))
""",
}


def child_env(framework: str, cache: str) -> Dict[str, str]:
    """The fresh process's environment: the cell's own, with the framework's persistent cache in ``cache``."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONDONTWRITEBYTECODE="1")
    if framework == "torch":
        env.update(TORCHINDUCTOR_CACHE_DIR=cache, TORCHINDUCTOR_FX_GRAPH_CACHE="1", TORCHINDUCTOR_AUTOGRAD_CACHE="1")
    elif framework == "tensorflow":
        flags = env.get("TF_XLA_FLAGS", "")
        env["TF_XLA_FLAGS"] = (flags + " --tf_xla_persistent_cache_directory=%s" % cache).strip()
    return env


def first_call(framework: str, cache: str) -> float:
    """One fresh process's first call of the compiled step, in seconds (as it measured it)."""
    program = PROGRAMS[framework].format(w=WIDTH, n=LAYERS, b=BATCH)
    done = subprocess.run([sys.executable, "-c", program, cache], env=child_env(framework, cache),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=CHILD_TIMEOUT_S)
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    if done.returncode != 0 or not lines:
        tail = "\n".join(done.stderr.strip().splitlines()[-15:])
        raise RuntimeError("the fresh %s process failed (exit %d):\n%s" % (framework, done.returncode, tail))
    return float(json.loads(lines[-1])["first_call_s"])


class CompileCache(Benchmark):
    name = "compile.cache"
    seed = "today"
    title = ("pytorch#154456: a compiled training step's first call in a fresh process, the persistent compile "
             "cache cold or warm")

    def variants(self, preset: Preset) -> List[Variant]:
        return [make_variant(self, "eager", api, fn="mlp_grad", layers=LAYERS, width=WIDTH, batch=BATCH, cache=cache)
                for api in ("tf", BACKEND_API) for cache in CACHES]

    def prepare(self, variant: Variant, env: Any) -> Prepared:
        compat = env.compat
        if variant.api == BACKEND_API:
            from ..frameworks import cell_backend_of

            framework = cell_backend_of(compat)
            reason = compat.compile_unavailable() if framework == "torch" else None
            if reason:
                raise NotApplicable(reason)
        else:
            compat.require_tf("TensorFlow's XLA cache")
            if tuple(int(p) for p in env.tf.__version__.split(".")[:2]) < (2, 16):
                raise NotApplicable("XLA's persistent cache (--tf_xla_persistent_cache_directory) is used here "
                                    "from TF 2.16; this cell has TF %s" % env.tf.__version__)
            framework = "tensorflow"
        root = tempfile.mkdtemp(prefix="tfmatrix-compile-cache-")
        warm = os.path.join(root, "warm")
        cold = variant.param("cache") == "cold"
        times: List[float] = []

        def step() -> float:
            where = tempfile.mkdtemp(dir=root) if cold else warm
            try:
                seconds = first_call(framework, where)
            finally:
                if cold:
                    shutil.rmtree(where, ignore_errors=True)
            times.append(seconds)
            return seconds

        def figures() -> Dict[str, Any]:
            ordered = sorted(times[1:] or times)
            return {"compile_s": (ordered[len(ordered) // 2], "s")}

        return Prepared(step=step, self_timed=True, figures=figures,
                        cleanup=lambda: shutil.rmtree(root, ignore_errors=True),
                        info={"framework": framework, "cache": variant.param("cache"), "child": sys.executable})


BENCHMARKS = [CompileCache()]
