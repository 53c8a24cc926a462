"""The results file format, versioned, and a validator for it.

This is the one contract between the suite (inside cells) and the host
(runners and report), so the host imports this module too; it must stay pure
Python 3.7 with no third-party imports. Bump ``SCHEMA_VERSION`` on any change
a reader could trip over, and teach ``tfmatrix.report`` to read or refuse the
old one.

Besides the file format, the other texts both halves read or write live here
once, each named below: the variant-id parameter text (``param_text``), the
preset names (``PRESET_NAMES``), the progress line (``PROGRESS_FORMAT`` /
``PROGRESS_PATTERN``) and the frameworks a cell runs on (``FRAMEWORKS``,
``NO_TF_BACKENDS``). ``tests/test_contracts.py`` checks that the suite and
the host use them.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

# The suite's presets (``suite.definitions.PRESETS`` keys, in that order); the host
# validates ``preset =`` in matrix files and ``--preset`` against these.
PRESET_NAMES = ("quick", "seed", "standard", "full")

# The frameworks a cell runs its benchmarks on, by Keras backend (``KERAS_BACKEND``; a cell without one runs
# TensorFlow), each as a reader knows it; in this order wherever cells of several frameworks are listed. A Keras 3
# cell on one of ``NO_TF_BACKENDS`` installs no TensorFlow: the suite's ``backend.BackendCompat`` stands in for it.
FRAMEWORKS = {"tensorflow": "TensorFlow", "jax": "JAX", "torch": "PyTorch"}
NO_TF_BACKENDS = tuple(b for b in FRAMEWORKS if b != "tensorflow")

# Benchmark files from outside the suite (a user's own, ``suite.plugins``): files or
# directories, ``os.pathsep`` between them; the host's runners set it for ``[suite] paths``.
PLUGINS_ENV = "TFMATRIX_SUITE_PLUGINS"
# A/B inside one run (``tfmatrix ab``): an entry ``SIDE=PATH`` (``base=/opt/tfmatrix/bench/0/bench.py``)
# is one version of a benchmark file; ``suite.sides`` measures both versions of a benchmark as one
# benchmark whose variants carry the parameter ``side=SIDE``, so the two sides are window-mates.
SIDE_PARAM = "side"
SIDE_PATTERN = r"^([a-z][a-z0-9_]{0,15})=(.+)$"


# ``suite run --set NAME=VALUE``: a parameter, or one element of a shape (``batch_shape[0]=64``). The host writes
# these (``tfmatrix sweep``'s axes) and reads them back off the records (``setting_target``); the suite parses them.
SETTING_PATTERN = r"^([a-z_][a-z0-9_]*)(?:\[([0-9])\])?$"


def setting_target(name: str) -> "Optional[Tuple[str, Optional[int]]]":
    """``n`` -> ("n", None), ``batch_shape[0]`` -> ("batch_shape", 0); None for a name that is neither."""
    import re

    m = re.match(SETTING_PATTERN, name)
    if m is None:
        return None
    return m.group(1), None if m.group(2) is None else int(m.group(2))


def side_entry(side: str, path: str) -> str:
    """One ``$TFMATRIX_SUITE_PLUGINS`` entry naming ``path`` as the version of the files called ``side``."""
    return "%s=%s" % (side, path)

# One line per finished variant run, written by ``suite.run.Progress`` and parsed
# by ``tfmatrix.progress`` for 'benchmark i of n' and the ETA:
# ``[suite 12/140] ok      training.fit[model=small,...]  median 1.2 ms``.
PROGRESS_FORMAT = "[suite %d/%d] %-7s %s  %s\n"      # done, total, status, variant id, detail
PROGRESS_PATTERN = r"^\[suite (\d+)/(\d+)\]\s+(\S+)\s+(\S+)"   # -> done, total, status, variant id


def param_text(value: Any) -> str:
    """A parameter value as it appears in variant ids (``model=small``, lists as ``8x40x16``).

    The suite builds ids with it and the report matches findings and claims
    against it, so the two cannot drift apart.
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (tuple, list)):
        return "x".join(param_text(x) for x in value)
    return str(value)

SCHEMA_NAME = "tfmatrix.results"
SCHEMA_VERSION = 1
STATUSES = ("ok", "n/a", "error", "timeout")
RUN_STATUSES = ("ok", "error")
STAT_KEYS = ("n", "mean", "std", "median", "q1", "q3", "iqr", "min", "max", "cv")

TOP_KEYS = {
    "schema": str,
    "schema_version": int,
    "suite_version": str,
    "status": str,
    "error": (str, type(None)),
    "preset": str,
    "config": dict,
    "cell": dict,
    "environment": dict,
    "gpu": dict,
    "warnings": list,
    "started": str,
    "finished": str,
    "wall_s": (int, float),
    "records": list,
}

RECORD_KEYS = {
    "id": str,
    "benchmark": str,
    "seed": str,
    "title": str,
    "params": dict,
    "mode": str,
    "api": str,
    "status": str,
    "reason": (str, type(None)),
    "unit": str,
    "samples": list,
    "per_process": list,
    "iterations": dict,
    "stats": (dict, type(None)),
    "between_process": (dict, type(None)),
    "unstable": bool,
    "setup": dict,
    "extra": dict,
    "info": dict,
    "peak_rss_mb": (int, float, type(None)),
    "wall_s": (int, float),
}

# Keys a record may lack: ``traceback`` (a failed process's tail, ``suite.run.combine``) and
# ``schedule`` (records from before windows and adaptive stopping have none). Type-checked when present.
RECORD_OPTIONAL_KEYS = {
    "traceback": str,
    "schedule": dict,
    "figures": dict,
}
# ``figures``: numbers a benchmark measures beside its samples, each with its unit and one value per process
# (``{"compile_s": {"unit": "s", "values": [3.1, 2.9]}}``): a fresh process's compile time, a training loop's
# per-step drift (``Prepared.figures``). Records without them have no key.
FIGURE_KEYS = {
    "unit": str,            # "s", "%/100 steps", "MiB"
    "values": list,         # one number per process (null where a process measured none)
}

# ``iterations`` and ``schedule`` hold one list entry per process (``inner``: one number); ``suite.run.combine``
# writes every key of ``ITERATIONS_KEYS`` and ``SCHEDULE_KEYS``; readers type-check those present.
ITERATIONS_KEYS = {
    "per_repeat": list,
    "repeats": list,
    "inner": int,
    "warmup_calls": list,
}
SCHEDULE_KEYS = {
    "windows": list,        # the window each process sampled the variant in (records of a window pair up)
    "rounds": list,         # how many rounds each process ran
    "stopped": list,        # why each process stopped sampling
}
SCHEDULE_OPTIONAL_KEYS = {
    "passes": list,         # the matrix round (pass) each process came from
    "leads": list,          # an ab run's: the side that went first in the variant's pair, per process (sides.Order)
}

# A cell's catalogue is what its framework has. A variant of a framework the cell does not hold (tf.keras, api=tf
# or graph mode on a Keras 3 JAX/PyTorch cell; an api=backend variant in a TensorFlow cell) is no record: the
# results' ``config[OUTSIDE_KEY]`` lists those variants by reason, each as the catalogue entry it would have been
# (``suite.run.set_aside``), so the report can still say why a claim cannot exist there without counting them n/a.
OUTSIDE_KEY = "outside"
OUTSIDE_KEYS = {"reason": str, "variants": list}
OUTSIDE_VARIANT_KEYS = {"id": str, "benchmark": str, "seed": str, "params": dict, "mode": str, "api": str}

# Every key of a record, required or not: the host's shape check (``tfmatrix.results.shapes.RECORD``) is built on it.
ALL_RECORD_KEYS = dict(RECORD_KEYS, **RECORD_OPTIONAL_KEYS)


def validate(doc: Any) -> List[str]:
    """Every way ``doc`` breaks the schema, as readable strings (empty: valid)."""
    problems: List[str] = []
    if not isinstance(doc, dict):
        return ["results must be a JSON object"]
    _check_keys(doc, TOP_KEYS, "results", problems)
    if doc.get("schema") != SCHEMA_NAME:
        problems.append("schema must be %r, got %r" % (SCHEMA_NAME, doc.get("schema")))
    if doc.get("schema_version") != SCHEMA_VERSION:
        problems.append("schema_version must be %d, got %r" % (SCHEMA_VERSION, doc.get("schema_version")))
    if doc.get("status") not in RUN_STATUSES:
        problems.append("status must be one of %s" % (RUN_STATUSES,))
    gpu = doc.get("gpu")
    if isinstance(gpu, dict):
        for key in ("requested", "visible", "ok"):
            if key not in gpu:
                problems.append("gpu.%s missing" % key)
    for i, rec in enumerate(doc.get("records") or []):
        problems.extend(validate_record(rec, "records[%d]" % i))
    config = doc.get("config")
    for i, group in enumerate((config.get(OUTSIDE_KEY) or []) if isinstance(config, dict) else []):
        problems.extend(_validate_outside(group, "config.%s[%d]" % (OUTSIDE_KEY, i)))
    return problems


def _validate_outside(group: Any, where: str) -> List[str]:
    problems: List[str] = []
    if not isinstance(group, dict):
        return ["%s must be an object" % where]
    _check_keys(group, OUTSIDE_KEYS, where, problems)
    for j, entry in enumerate(group.get("variants") or []):
        if not isinstance(entry, dict):
            problems.append("%s.variants[%d] must be an object" % (where, j))
        else:
            _check_keys(entry, OUTSIDE_VARIANT_KEYS, "%s.variants[%d]" % (where, j), problems)
    return problems


def validate_record(rec: Any, where: str = "record") -> List[str]:
    problems: List[str] = []
    if not isinstance(rec, dict):
        return ["%s must be an object" % where]
    _check_keys(rec, RECORD_KEYS, where, problems)
    _check_keys(rec, RECORD_OPTIONAL_KEYS, where, problems, required=False)
    if isinstance(rec.get("iterations"), dict):
        _check_keys(rec["iterations"], ITERATIONS_KEYS, where + ".iterations", problems, required=False)
    if isinstance(rec.get("schedule"), dict):
        _check_keys(rec["schedule"], dict(SCHEDULE_KEYS, **SCHEDULE_OPTIONAL_KEYS), where + ".schedule", problems,
                    required=False)
    for name, figure in (rec.get("figures") or {}).items() if isinstance(rec.get("figures"), dict) else ():
        if not isinstance(figure, dict):
            problems.append("%s.figures.%s must be an object" % (where, name))
        else:
            _check_keys(figure, FIGURE_KEYS, "%s.figures.%s" % (where, name), problems)
    status = rec.get("status")
    if status not in STATUSES:
        problems.append("%s.status %r not in %s" % (where, status, STATUSES))
    if status == "ok":
        if not rec.get("samples"):
            problems.append("%s: ok record without samples" % where)
        stats = rec.get("stats")
        if not isinstance(stats, dict) or any(k not in stats for k in STAT_KEYS):
            problems.append("%s: ok record needs stats with %s" % (where, ", ".join(STAT_KEYS)))
        if any((not isinstance(s, (int, float))) or s < 0 for s in rec.get("samples") or []):
            problems.append("%s: samples must be non-negative numbers" % where)
    elif not rec.get("reason"):
        problems.append("%s: %s record without a reason" % (where, status))
    return problems


def _check_keys(obj: Dict[str, Any], spec: Dict[str, Any], where: str, problems: List[str],
                required: bool = True) -> None:
    for key, types in spec.items():
        if key not in obj:
            if required:
                problems.append("%s.%s missing" % (where, key))
        elif not isinstance(obj[key], types):
            problems.append("%s.%s has type %s" % (where, key, type(obj[key]).__name__))


# --------------------------------------------------------------------------- profiles (``python -m suite profile``)
# A profiled run's file: the same top-level keys as a results file (``TOP_KEYS``), its own
# schema name, and records that hold a function table instead of samples (``suite.profiling``).
# ``tfmatrix.analysis.explain.profiles`` reads it; nothing reads a profile as a time.
PROFILES_SCHEMA_NAME = "tfmatrix.profiles"
PROFILES_SCHEMA_VERSION = 1
PROFILE_RECORD_KEYS = {
    "id": str,
    "benchmark": str,
    "params": dict,
    "status": str,
    "reason": (str, type(None)),
    "profiler": str,              # "cProfile"
    "step_calls": int,            # calls of the variant's step under the profiler
    "wall_s": (int, float),       # wall time of those calls, profiler included
    "functions": list,            # FUNCTION_KEYS rows, costliest own time first
    "rest": dict,                 # {"functions": n, "self_s": s}: the rows left out (each under MIN_SHARE)
    "extra": dict,                # the benchmark's own facts after the calls (traces of a tf.function, ...)
    "info": dict,
    "first_call_s": (int, float, type(None)),
}
PROFILE_RECORD_OPTIONAL_KEYS = {
    "plain_step_s": (int, float), # a step with no profiler, the same process, just before: the profilers' overhead
    "ops": dict,                  # TensorFlow's profiler, per step (``suite.opprofile``): OPS_KEYS
    "ops_unavailable": str,       # why there is no op table (TF 1.x, a JAX/PyTorch cell, the profiler failed)
}
OPS_KEYS = {
    "profiler": str,              # "tf.profiler"
    "step_calls": int,            # calls of the step under it
    "wall_s": (int, float),       # their wall time, TensorFlow's profiler included (its overhead, beside cProfile's)
    "types": list,                # OP_TYPE_KEYS rows, most time first
    "kinds": dict,                # {kind: {"count": per step, "time_s": per step}}
    "functions": dict,            # {tf.function name: {"calls": per step, "traced": times traced during the calls}}
}
OP_TYPE_KEYS = {
    "kind": str,                  # "eager" | "graph" | "function" | "xla" | "copy"
    "type": str,                  # op type ("MatMul"), HLO op ("broadcast_add_fusion"), function name
    "count": (int, float),        # per step
    "time_s": (int, float),       # per step
}
FUNCTION_KEYS = {
    "file": str,                  # as the interpreter names it ("~" for built-ins)
    "line": int,
    "name": str,
    "calls": int,
    "self_s": (int, float),       # time in the function itself
    "cum_s": (int, float),        # with everything it called
    "callers": list,              # [file, line, name, calls, cum_s] of its costliest callers
}


def validate_profiles(doc: Any) -> List[str]:
    """Every way a profiles file breaks its schema (empty: valid)."""
    problems: List[str] = []
    if not isinstance(doc, dict):
        return ["profiles must be a JSON object"]
    _check_keys(doc, TOP_KEYS, "profiles", problems)
    if doc.get("schema") != PROFILES_SCHEMA_NAME or doc.get("schema_version") != PROFILES_SCHEMA_VERSION:
        problems.append("schema must be %r version %d" % (PROFILES_SCHEMA_NAME, PROFILES_SCHEMA_VERSION))
    for i, rec in enumerate(doc.get("records") or []):
        where = "records[%d]" % i
        if not isinstance(rec, dict):
            problems.append("%s must be an object" % where)
            continue
        if rec.get("status") != "ok":
            if rec.get("status") not in STATUSES or not rec.get("reason"):
                problems.append("%s: a %r record needs a reason" % (where, rec.get("status")))
            continue
        _check_keys(rec, PROFILE_RECORD_KEYS, where, problems)
        _check_keys(rec, PROFILE_RECORD_OPTIONAL_KEYS, where, problems, required=False)
        if isinstance(rec.get("ops"), dict):
            _check_keys(rec["ops"], OPS_KEYS, where + ".ops", problems)
            for j, row in enumerate(rec["ops"].get("types") or []):
                if isinstance(row, dict):
                    _check_keys(row, OP_TYPE_KEYS, "%s.ops.types[%d]" % (where, j), problems)
                else:
                    problems.append("%s.ops.types[%d] must be an object" % (where, j))
        for j, row in enumerate(rec.get("functions") or []):
            if isinstance(row, dict):
                _check_keys(row, FUNCTION_KEYS, "%s.functions[%d]" % (where, j), problems)
            else:
                problems.append("%s.functions[%d] must be an object" % (where, j))
    return problems
