"""The Environment section: one row per cell (what ran: TF, Keras, Python, CUDA, GPUs, CPU, image, runner) and the
run's schedule with the host's speed over it."""
from __future__ import annotations

from typing import Any

from markupsafe import Markup

from ..analysis.cells import CellResult
from .charts import host_speed_svg


def env_row(c: CellResult) -> dict[str, Any]:
    tf = c.tf_facts
    host = c.host_facts
    build = tf.get("build_info") or {}
    spec = c.cell_spec
    runner = c.runner_info
    keras = tf.get("keras") or {}
    tfk = keras.get("tf.keras") or {}
    sk = keras.get("keras") or {}
    cuda_built = "/".join(str(build.get(k)) for k in ("cuda_version", "cudnn_version") if build.get(k))
    if not cuda_built and tf:
        cuda_built = "CUDA build, versions not reported" if build.get("is_cuda_build") else "CPU-only build"
    cuda_spec = "/".join(str(spec.get(k)) for k in ("cuda", "cudnn") if spec.get(k))
    cpu = host.get("cpu") or {}
    py = (host.get("python") or {}).get("version") or c.python
    threads = tf.get("threads") or {}
    smi = host.get("nvidia_smi")
    if isinstance(smi, dict):
        smi = ", ".join(f"{k}={v}" for k, v in smi.items())
    base = runner.get("base") or ""
    if not base and isinstance(spec.get("base"), dict):
        base = spec["base"].get("ref") or ""
    tfk_flavour, tfk_version = str(tfk.get("flavour") or ""), str(tfk.get("version") or "")
    image = runner.get("image") or spec.get("image") or (c.results.cell.get("image") if c.results else None) or ""
    return {
        "name": c.name, "status": c.status, "target": c.target,
        "tf": (c.tf_installed or c.tf) + (f" ({c.tf_git})" if c.tf_git else "") if c.has_tf else "-",
        "tf_spec": c.tf,
        "tf_keras": tfk_flavour if tfk_version in tfk_flavour else (f"{tfk_flavour} {tfk_version}").strip(),
        "keras": sk.get("flavour") or ("n/a" if sk.get("unavailable") else "")
        or (f"{c.keras_flavour} {c.keras_version}").strip(),
        "keras_why": sk.get("unavailable") or "",
        "python": py, "numpy": tf.get("numpy") or "",
        "cuda_built": cuda_built, "cuda_spec": cuda_spec,
        "gpus": ", ".join(c.gpus_visible) or ("none" if tf else ""),
        "gpu_problem": c.gpu_problem,
        "nvidia_smi": str(smi or ""),
        "cpu": f"{cpu.get('model') or '?'} ({cpu.get('logical_cpus') or '?'} logical CPUs)" if cpu else "",
        "cpu_flags": " ".join(c.cpu_flags()),
        "onednn": "" if tf.get("onednn") is None else ("on" if tf.get("onednn") else "off"),
        "threads": f"intra {threads.get('intra_op')} / inter {threads.get('inter_op')}" if threads else "",
        "image": image,
        "image_id": runner.get("image_id") or "",
        "base": base,
        "runner": c.runner + (f" ({runner['interpreter']})" if runner.get("interpreter") else ""),
        "preset": c.preset, "suite": c.suite_version + (f" ({c.suite_hash})" if c.suite_hash else ""),
        "finished": c.finished,
        "platform": host.get("platform") or "",
    }


def schedule_view(cells: list[CellResult]) -> dict[str, Any] | None:
    """How the run was scheduled (interleaved: seed, rounds, turns) and the host's speed over it, from the first
    cell that recorded them (every cell of one run holds the same series)."""
    for c in cells:
        schedule = c.results.config.get("schedule") if c.results else None
        series = c.results.host_speed if c.results else []
        if isinstance(schedule, dict) and series:
            points = [(p.turn, p.seconds * 1e3) for p in series]
            runs = {str(((x.results.config.get("schedule") or {}) if x.results else {}).get("run")) for x in cells
                    if x.results and x.results.config.get("schedule")}
            values = sorted(ms for _, ms in points)
            return {"run": schedule.get("run"), "seed": schedule.get("seed"), "rounds": schedule.get("rounds_asked"),
                    "turns": len(points), "runs": len(runs), "svg": Markup(host_speed_svg(points)),
                    "spread": f"{values[0]:.2f}–{values[-1]:.2f} ms (median {values[len(values) // 2]:.2f} ms)"}
    return None
