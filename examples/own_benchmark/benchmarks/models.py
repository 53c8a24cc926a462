"""Two models of your own, timed across the matrix: a Transformer encoder block and a small ResNet.

Each is trained with ``model.fit`` and served with ``model(x)``; every cell
runs both with its own TensorFlow and Keras (``tf.keras``: Keras 2 in TF 2.15,
tf_keras with ``TF_USE_LEGACY_KERAS=1``, Keras 3 from TF 2.16). TensorFlow is
imported inside ``setup`` only, through ``env``: the suite lists variants
without importing it.
"""
from suite.api import NotApplicable, Step, UserBenchmark

STEPS = 4          # batches per fit() call: times are per training step


def transformer_encoder(keras, seq, d_model, heads, classes=10):
    """One pre-norm encoder block (self-attention + feed-forward, residuals) over token embeddings."""
    L = keras.layers
    tokens = keras.Input(shape=(seq,), dtype="int32")
    x = L.Embedding(1000, d_model)(tokens)
    h = L.LayerNormalization()(x)
    h = L.MultiHeadAttention(num_heads=heads, key_dim=d_model // heads)(h, h)
    x = L.Add()([x, L.Dropout(0.1)(h)])
    h = L.LayerNormalization()(x)
    h = L.Dense(4 * d_model, activation="gelu" if hasattr(keras.activations, "gelu") else "relu")(h)
    h = L.Dense(d_model)(h)
    x = L.Add()([x, L.Dropout(0.1)(h)])
    x = L.GlobalAveragePooling1D()(x)
    return keras.Model(tokens, L.Dense(classes)(x))


def resnet(keras, image, width, blocks, classes=10):
    """A ResNet-style CNN: a stem, then residual blocks (conv-BN-ReLU x2 + identity), pooled."""
    L = keras.layers
    inputs = keras.Input(shape=(image, image, 3))
    x = L.Conv2D(width, 3, padding="same", use_bias=False)(inputs)
    x = L.ReLU()(L.BatchNormalization()(x))
    for _ in range(blocks):
        h = L.Conv2D(width, 3, padding="same", use_bias=False)(x)
        h = L.ReLU()(L.BatchNormalization()(h))
        h = L.Conv2D(width, 3, padding="same", use_bias=False)(h)
        h = L.BatchNormalization()(h)
        x = L.ReLU()(L.Add()([x, h]))
    x = L.GlobalAveragePooling2D()(x)
    return keras.Model(inputs, L.Dense(classes)(x))


def train_or_serve(model, keras, x, y, path, batch, env):
    """The timed call: ``fit`` over STEPS batches, or one ``model(x)`` on a batch."""
    if path == "call":
        xb = x[:batch]
        return Step(lambda: env.materialize(model(xb, training=False)), info={"params": model.count_params()})
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))

    def fit():
        return model.fit(x, y, batch_size=batch, epochs=1, shuffle=False, verbose=0)

    # the first fit() builds the train function (tracing): timed apart, never a sample
    return Step(fit, inner=STEPS, first=fit, info={"params": model.count_params()})


class Transformer(UserBenchmark):
    name = "own.transformer"
    title = "Transformer encoder block: fit vs model(x)"
    params = {"path": ["fit", "call"], "batch": [32], "seq": [64], "d_model": [128], "heads": [4]}
    sizes = {"quick": {"batch": [8], "seq": [16], "d_model": [32], "heads": [2]}}

    def setup(self, p, env):
        keras = env.keras
        if not hasattr(keras.layers, "MultiHeadAttention"):
            raise NotApplicable("keras.layers.MultiHeadAttention arrived in TF 2.4")
        model = transformer_encoder(keras, p["seq"], p["d_model"], p["heads"])
        rng = env.rng(1)
        n = p["batch"] * STEPS
        x = rng.randint(0, 1000, (n, p["seq"])).astype("int32")
        y = rng.randint(0, 10, (n,)).astype("int32")
        return train_or_serve(model, keras, x, y, p["path"], p["batch"], env)


class ResNet(UserBenchmark):
    name = "own.resnet"
    title = "ResNet-style CNN: fit vs model(x)"
    params = {"path": ["fit", "call"], "batch": [32], "image": [32], "width": [32], "blocks": [2]}
    sizes = {"quick": {"batch": [8], "image": [16], "width": [8], "blocks": [1]}}

    def setup(self, p, env):
        keras = env.keras
        model = resnet(keras, p["image"], p["width"], p["blocks"])
        rng = env.rng(2)
        n = p["batch"] * STEPS
        x = rng.rand(n, p["image"], p["image"], 3).astype("float32")
        y = rng.randint(0, 10, (n,)).astype("int32")
        return train_or_serve(model, keras, x, y, p["path"], p["batch"], env)


BENCHMARKS = [Transformer(), ResNet()]
