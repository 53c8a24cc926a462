"""An autoregressive generate loop on each Keras 3 backend: static against growing shapes, eager against compiled.

keras-team/keras-hub#2593 (2026-02): ``CausalLM.generate`` is 4.5x slower on
the PyTorch backend than on JAX. keras-team/keras#22561 (2026-03) timed a
32-token generate with Keras on PyTorch: 159 ms compiled against 102 ms
eager. The keras.io benchmarks (keras-team/keras-io#1792, 2024) blamed
PyTorch's slow LLM inference on KerasNLP's static sequence padding. Each is
a question about one loop: call the model once per new token, take the last
position's most likely token, append it.

``generate.loop`` is that loop over a small causal language model (token
embedding 64 x 32, one causal self-attention block of 2 heads with a
residual, a dense head over the vocabulary), batch 4, an 8-token prompt, 16
new tokens (8 in ``quick``); samples are seconds per generated token:

* ``shapes=static``: a buffer of prompt + new tokens, zero-padded, fed whole
  at every step (one input shape: one trace); ``shapes=growing``: the
  tokens so far (a new length every step: a compiled call traces each, the
  retracing of seed 004, per token; a trace is cached for the next call);
* ``call=eager``: ``model(x, training=False)``; ``call=compiled``:
  ``predict_on_batch(x)`` after ``compile(jit_compile=True)`` (XLA on
  TensorFlow and JAX, ``torch.compile`` on PyTorch).

The first call (a whole generate, every trace of a growing loop) is timed
apart. A TensorFlow cell runs the ``tf.keras`` variants (Keras 3), a JAX or
PyTorch cell the ``keras`` ones.
"""
from __future__ import annotations

from typing import Any, List

from ..definitions import Benchmark, Prepared, Preset, Variant, make_variant
from .compiled import jit_compiled, jit_unavailable, keras3, model_info

KERAS_APIS = ("tf.keras", "keras")
CALLS = ("eager", "compiled")
SHAPES = ("static", "growing")
VOCAB, WIDTH, HEADS = 64, 32, 2
# preset -> (batch, prompt tokens, new tokens)
SCALE = {"quick": (4, 8, 8), "seed": (4, 8, 16), "standard": (4, 8, 32), "full": (4, 8, 32)}


def causal_lm(k: Any) -> Any:
    """Token ids (any length) -> next-token logits at every position."""
    L = k.layers
    ids = L.Input(shape=(None,), dtype="int32")
    x = L.Embedding(VOCAB, WIDTH)(ids)
    attended = L.MultiHeadAttention(num_heads=HEADS, key_dim=WIDTH // HEADS)(x, x, use_causal_mask=True)
    x = L.LayerNormalization()(L.Add()([x, attended]))
    return k.models.Model(ids, L.Dense(VOCAB)(x))


class GenerateLoop(Benchmark):
    name = "generate.loop"
    seed = "today"
    title = ("keras-hub#2593: a causal LM's generate loop, one model call per token: static or growing shapes, "
             "eager or compiled")

    def variants(self, preset: Preset) -> List[Variant]:
        batch, prompt, new = SCALE[preset.name]
        return [make_variant(self, "eager", api, model="causal_lm", batch=batch, prompt=prompt, new_tokens=new,
                             shapes=shapes, call=call)
                for api in KERAS_APIS for call in CALLS for shapes in SHAPES]

    def prepare(self, variant: Variant, env: Any) -> Prepared:
        compat = env.compat
        k = keras3(env, variant.api, "a generate loop")
        compiled = variant.param("call") == "compiled"
        jit_unavailable(compat, compiled)
        batch, prompt, new = (int(variant.param(n)) for n in ("batch", "prompt", "new_tokens"))
        np = env.np
        model = causal_lm(k)
        info = model_info(k, model)
        materialize = compat.materialize
        if compiled:
            jit_compiled(k, model)

            def logits(ids: Any) -> Any:
                return model.predict_on_batch(ids)
        else:
            def logits(ids: Any) -> Any:
                return materialize(model(ids, training=False))
        start = env.rng(1).randint(1, VOCAB, (batch, prompt)).astype("int32")
        total = prompt + new

        if variant.param("shapes") == "static":
            def step() -> Any:
                buf = np.zeros((batch, total), dtype="int32")
                buf[:, :prompt] = start
                for t in range(prompt, total):
                    buf[:, t] = np.argmax(logits(buf)[:, t - 1, :], axis=-1)
                return buf
        else:
            def step() -> Any:
                ids = start
                for _ in range(new):
                    nxt = np.argmax(logits(ids)[:, -1, :], axis=-1).astype("int32")
                    ids = np.concatenate([ids, nxt[:, None]], axis=1)
                return ids
        return Prepared(step=step, inner=new, info=info)


BENCHMARKS = [GenerateLoop()]
