"""One cell's table -> a ``Cell``, validated against the release table.

The table is read once into a typed ``CellTable`` (``cell_table``: every key's
type); then the TF release, Keras, base image and Python (they constrain each
other: ``base_image``), CUDA/cuDNN, requirement lines and environment (the
name: ``names``) are resolved from its fields. Pure: the table and settings
come in as arguments; untested pairings become warnings only under
``allow_untested``.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ..versions import minor_series, version_key
from . import backends, existing
from .base_image import BaseChoice, resolve_base
from .cell_table import CellTable, read_cell_table
from .checks import Where, checked, gated_requirements, type_name
from .names import resolve_name
from .records import PATTERNS, RESERVED_ENV, RESERVED_ENV_PREFIX, Cell, KerasSpec, Settings
from .releases import Release, Table


def _vmatch(given: str, tested: str) -> bool:
    """ "8" matches "8.6"; "11.2.1" matches "11.2"; "11.8" does not match "11.2"."""
    a, b = given.split("."), tested.split(".")
    n = min(len(a), len(b))
    return a[:n] == b[:n]


def _resolve_tf(t: CellTable, table: Table) -> tuple[Release, str, str]:
    """-> (release row, exact version, version as written)."""
    where, given = t.where, t.tf
    if given is None:
        raise where.error("tf", "missing", 'every cell needs a TF release, e.g. tf = "1.15"')
    checked(where, "tf", given, "tf", 'a version like "1.15" or "1.15.5"',
            "write the TF release as major.minor or major.minor.patch")
    try:
        rel = table.release(given)
    except KeyError:
        raise where.error("tf", f"TF {minor_series(given)} is not in the compatibility table "
                                f"(known: {table.oldest().tf} .. {table.newest().tf})",
                          "pick a known release or add a row to tfmatrix/data/releases.toml")
    if given == rel.tf:
        return rel, rel.newest, given
    if given not in rel.patches:
        raise where.error("tf", f"TF {given} is not a known {rel.tf} release (known: {', '.join(rel.patches)})",
                          f'use one of those or tf = "{rel.tf}" for {rel.newest}')
    return rel, given, given


def _resolve_keras(t: CellTable, rel: Release) -> tuple[KerasSpec, str | None]:
    """-> (KerasSpec, the name fragment: None for the release's default Keras)."""
    where, given = t.where, t.keras
    fix_all = 'use "tf.keras", a Keras 2 version like "2.2.5", "keras3" or a 3.x version, or "tf_keras"'
    if given is None:
        given = rel.keras
    if given == "tf.keras":
        if rel.keras != "tf.keras":
            raise where.error("keras", f"TF {rel.tf} has no bundled Keras 2 (its tf.keras is Keras 3)",
                              'use keras = "keras3" or keras = "tf_keras"')
        return KerasSpec("tf.keras", None, None), None
    if given == "keras3" or (given.startswith("3.") and PATTERNS["keras_version"].fullmatch(given)):
        if rel.keras3 is None:
            raise where.error("keras", f"Keras 3 needs TF >= 2.16; TF {rel.tf} bundles Keras 2 as tf.keras",
                              'use keras = "tf.keras" or a TF release >= 2.16')
        version = rel.keras3 if given == "keras3" else given
        if rel.keras3_min and version_key(version) < version_key(rel.keras3_min):
            raise where.error("keras", f"TF {rel.tf} requires keras>={rel.keras3_min}, not {version}",
                              f'use keras = "keras3" ({rel.keras3}) or a version >= {rel.keras3_min}')
        return (KerasSpec("keras3", version, f"{rel.keras3_package}=={version}"),
                "keras3" if given == "keras3" else f"keras{version}")
    if given == "tf_keras" or given.startswith("tf_keras=="):
        if rel.tf_keras is None:
            raise where.error("keras", f"tf_keras is for TF >= 2.16; TF {rel.tf} bundles Keras 2 as tf.keras",
                              'use keras = "tf.keras"')
        version = rel.tf_keras if given == "tf_keras" else given.removeprefix("tf_keras==")
        checked(where, "keras", version, "keras_version", "a tf_keras version like 2.16.0",
                'write keras = "tf_keras==2.16.0" or just "tf_keras"')
        if minor_series(version) != rel.tf:
            raise where.error("keras", f"tf_keras {version} pairs with TF {minor_series(version)} only, "
                                       f"not TF {rel.tf}", f'use keras = "tf_keras" ({rel.tf_keras})')
        part = "tf_keras" if given == "tf_keras" else f"tf_keras{version}"
        return KerasSpec("tf_keras", version, f"tf-keras=={version}"), part
    if given.startswith("2.") and PATTERNS["keras_version"].fullmatch(given):
        if rel.keras3_min:  # the TF wheel itself requires keras >= 3: pip cannot install this pair at all
            raise where.error("keras", f"TF {rel.tf} requires keras>={rel.keras3_min}, so pip cannot install "
                                       f"standalone Keras {given} with it{where.cannot_install()}",
                              'use keras = "tf_keras" for Keras 2 on this release, or "keras3"')
        if given not in rel.keras2:
            known = ", ".join(rel.keras2) if rel.keras2 else "none (from TF 2.2 the keras package is tf.keras itself)"
            where.not_tested("keras", f"standalone Keras {given} is not known to pair with TF {rel.tf} "
                                      f"(known: {known})", "use a known pairing")
        return KerasSpec("keras", given, f"keras=={given}"), f"keras{given}"
    raise where.error("keras", f"{given!r} is not a Keras choice", fix_all)



def _resolve_cuda(t: CellTable, rel: Release, choice: BaseChoice, table: Table) -> tuple[str | None, str | None]:
    where, target, cuda_given, cudnn_given = t.where, t.target, t.cuda, t.cudnn
    if target == "cpu":
        for key, value in (("cuda", cuda_given), ("cudnn", cudnn_given)):
            if value is not None:
                raise where.error(key, "only GPU cells have CUDA/cuDNN versions", f'remove {key} or set target = "gpu"')
        return None, None
    if cuda_given is not None:
        checked(where, "cuda", cuda_given, "cuda", 'a CUDA version like "11.2"', 'write cuda = "major.minor"')
    if cudnn_given is not None:
        checked(where, "cudnn", cudnn_given, "cudnn", 'a cuDNN version like "8.1"', 'write cudnn = "major.minor"')
    cuda, cudnn = cuda_given or rel.cuda, cudnn_given or rel.cudnn
    cuda_differs, cudnn_differs = not _vmatch(cuda, rel.cuda), not _vmatch(cudnn, rel.cudnn)
    if cuda_differs:
        where.not_tested("cuda", f"TF {rel.tf} was built and tested with CUDA {rel.cuda}, not {cuda}",
                         f'use cuda = "{rel.cuda}"')
    if cudnn_differs and choice.pip_cuda:
        oldest = table.cudnn_installable(rel.cuda, cudnn)
        if oldest:
            raise where.error("cudnn", f"cuDNN comes from the {table.cudnn_wheel(rel.cuda)} wheel, whose oldest "
                                       f"version is {oldest}, so pip cannot install cuDNN {cudnn}"
                                       f"{where.cannot_install()}",
                              f'use cudnn = "{rel.cudnn}" or a version >= {oldest}')
    if cudnn_differs:
        where.not_tested("cudnn", f"TF {rel.tf} was built and tested with cuDNN {rel.cudnn}, not {cudnn}",
                         f'use cudnn = "{rel.cudnn}"')
    base = choice.base.upstream
    if choice.carries_cuda and (cuda_differs or cudnn_differs):
        key, want, has = ("cuda", cuda, rel.cuda) if cuda_differs else ("cudnn", cudnn, rel.cudnn)
        label = {"cuda": "CUDA", "cudnn": "cuDNN"}[key]
        raise where.error(key, f"the default GPU base {base} carries {label} {has}, not {want}",
                          "name a base image that carries it (base = \"...\")")
    if choice.pip_cuda and cuda_differs:
        raise where.error("cuda", f"CUDA comes from the nvidia-* wheels TF {rel.tf} pins (CUDA {rel.cuda}), not {cuda}",
                          "vary cudnn instead, or name a base image that carries this CUDA (base = \"...\")")
    return cuda, cudnn


def _requirements(t: CellTable, rel: Release, exact: str, keras: KerasSpec, cudnn: str | None, choice: BaseChoice,
                  table: Table) -> tuple[str, ...]:
    """requirements.txt lines: TF (+ CUDA wheels), Keras, the table's pins, the cell's pins."""
    lines: list[str] = []
    if t.target == "cpu":
        package = table.tf_keras.cpu_package if keras.flavour == "tf_keras" else rel.cpu_package_for(exact)
        lines.append(f"{package}=={exact}")
    elif rel.pip_cuda and choice.pip_cuda:
        wheels = list(rel.cuda_wheels)
        default_cudnn = cudnn is None or _vmatch(cudnn, rel.cudnn)
        if not default_cudnn:
            wheel = table.cudnn_wheel(rel.cuda)
            wheels = [f"{wheel}=={cudnn}.*" if w.startswith(f"{wheel}==") else w for w in wheels]
        extra = rel.and_cuda_extra and default_cudnn
        lines += [f"tensorflow[and-cuda]=={exact}" if extra else f"tensorflow=={exact}", *wheels]
    elif rel.pip_cuda:
        lines.append(f"tensorflow=={exact}")  # an explicit base carries its own CUDA
    else:
        lines.append(f"{rel.gpu_package}=={exact}")
    if keras.requirement:
        lines.append(keras.requirement)
    if keras.flavour == "tf_keras" and table.tf_keras.pin_keras3 and rel.keras3:
        lines.append(f"keras=={rel.keras3}")
    lines += [p.requirement for p in rel.pins]
    lines += t.pins
    return gated_requirements(t.where, lines)


def _resolve_env(t: CellTable, keras: KerasSpec, table: Table) -> tuple[tuple[str, str], ...]:
    where = t.where
    derived = list(table.tf_keras.env) if keras.flavour == "tf_keras" else []
    out = list(derived)
    for name, value in (t.env or {}).items():
        if not PATTERNS["env_name"].fullmatch(name):
            raise where.error("env", f"{name!r} is not an environment variable name", "use letters, digits and _")
        if name in RESERVED_ENV or name.startswith(RESERVED_ENV_PREFIX) or name in dict(derived):
            raise where.error("env", f"{name} is set by tfmatrix itself", f"remove {name} from env")
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise where.error("env", f"{name}: expected a string, got {type_name(value)}", f'write {name} = "..."')
        text = str(value)
        if not PATTERNS["env_value"].fullmatch(text):
            raise where.error("env", f"{name}: {text!r} contains characters that are not allowed",
                              "use letters, digits, spaces and _.,:/=+@%- (no quotes, $, ; or newlines)")
        out.append((name, text))
    return tuple(out)


def resolve_cell(file: str, origin: str, values: Mapping[str, Any], settings: Settings, table: Table,
                 pool_axis: bool = False) -> Cell:
    """Validate one cell's raw values against the table and build its ``Cell`` (pure).

    ``pool_axis``: the cell's pool came from an array (a hardware axis), so its
    default name shows the pool (``naming.resolve_name``).
    """
    t = read_cell_table(file, origin, values, settings)
    cell = _resolve_cell(t, f"{file}: {origin}", settings, table, pool_axis)
    rel = table.release(cell.tf_release) if cell.tf_release else None
    if rel is not None and rel.prerelease and not t.opt_in:
        raise t.where.error("tf", f"TF {rel.tf} is a release candidate ({rel.newest}); it runs only in an "
                                  "opt-in cell",
                            "add opt_in = true to the cell (it then runs when named: --only or `cell NAME`)")
    return dataclasses.replace(cell, opt_in=True) if t.opt_in else cell


def _resolve_cell(t: CellTable, origin: str, settings: Settings, table: Table, pool_axis: bool) -> Cell:
    """``resolve_cell`` past its flags: an existing environment, a jax/torch cell or a TensorFlow one."""
    if t.existing:
        return existing.resolve_existing(t, _resolve_env(t, existing.AS_INSTALLED, table), origin, pool_axis)
    backend, backend_given = backends.backend_of(t, table)
    if backend != backends.DEFAULT_BACKEND:
        return _resolve_backend_cell(t, origin, settings, table, backend, pool_axis)
    backends.check_no_release(t, backend)
    rel, exact, tf_written = _resolve_tf(t, table)
    keras, keras_part = _resolve_keras(t, rel)
    if backend_given:
        backends.check_tensorflow_keras(t.where, keras, rel.tf)
    choice = resolve_base(t, rel, table, settings.base_registry)
    cuda, cudnn = _resolve_cuda(t, rel, choice, table)
    requirements = _requirements(t, rel, exact, keras, cudnn, choice, table)
    env = _resolve_env(t, keras, table)
    target, limits = t.target, t.limits
    default = "-".join(p for p in (f"tf{tf_written}", keras_part, target) if p)
    name = resolve_name(t, {
        "tf": tf_written, "release": rel.tf, "keras": keras_part or keras.flavour, "python": choice.python,
        "target": target, "cuda": cuda or "", "cudnn": cudnn or "", "backend": backend, "backend_release": "",
        "default": default,
    }, pool_axis)  # fmt: skip
    if backend_given:
        env = _with_backend_env(t.where, env, backend, name)
    return Cell(
        name=name, tf=exact, tf_release=rel.tf, keras=keras, python=choice.python, target=target,
        cuda=cuda, cudnn=cudnn, base=choice.base, requirements=requirements, env=env, preset=limits.preset,
        repeats=limits.repeats, timeout_s=limits.timeout_s, memory=limits.memory, allow_untested=t.allow_untested,
        untested=tuple(t.where.untested), origin=origin, bootstrap=choice.bootstrap, backend=backend,
        pool=limits.pool,
    )  # fmt: skip


def _with_backend_env(where: Where, env: tuple[tuple[str, str], ...], backend: str,
                      name: str) -> tuple[tuple[str, str], ...]:
    derived = backends.backend_env(backend, name)
    for key, _ in derived:
        if key in dict(env):
            raise where.error("env", f"{key} is set by tfmatrix itself for a cell with a backend",
                              f"remove {key} from env")
    return derived + env


def _resolve_backend_cell(t: CellTable, origin: str, settings: Settings, table: Table, backend: str,
                          pool_axis: bool) -> Cell:
    """A jax/torch cell: Keras 3 and one release of its backend on the slim Python image, no TensorFlow."""
    k3 = backends.keras3_table(t.where, table)
    keras, keras_part = backends.resolve_keras(t, backend, k3)
    row, version, written = backends.resolve_release(t, backend, k3)
    python = backends.resolve_python(t, backend, keras, k3, table, (row, version))
    base = backends.resolve_base(t, backend, python, settings.base_registry)
    requirements = backends.requirements(t, keras, row, version)
    target, limits = t.target, t.limits
    cuda, cudnn = (row.cuda, row.cudnn) if target == "gpu" else (None, None)
    default = f"{keras_part}-{backend}{written}-{target}"
    name = resolve_name(t, {
        "tf": "", "release": "", "keras": keras_part, "python": python, "target": target, "cuda": cuda or "",
        "cudnn": cudnn or "", "backend": backend, "backend_release": version, "default": default,
    }, pool_axis)  # fmt: skip
    env = _with_backend_env(t.where, _resolve_env(t, keras, table), backend, name)
    return Cell(
        name=name, tf="", tf_release="", keras=keras, python=python, target=target, cuda=cuda, cudnn=cudnn,
        base=base, requirements=requirements, env=env, preset=limits.preset, repeats=limits.repeats,
        timeout_s=limits.timeout_s, memory=limits.memory, allow_untested=t.allow_untested,
        untested=tuple(t.where.untested), origin=origin, bootstrap=(), backend=backend, pool=limits.pool,
        backend_version=version,
    )  # fmt: skip
