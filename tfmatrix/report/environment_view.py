"""The Environment section: one row per cell (what ran: TF, Keras, Python, CUDA, GPUs, CPU, image, runner) and the
run's schedule with the host's speed over it."""
from __future__ import annotations

from typing import Any

from markupsafe import Markup

from ..analysis.cells import CellResult
from .charts import host_speed_svg


def env_row(c: CellResult) -> dict[str, Any]:
    tf, host, spec, runner = c.facts.tf, c.facts.host, c.facts.spec, c.facts.runner
    build, cpu, threads, tfk, sk = tf.build, host.cpu, tf.threads, tf.tf_keras, tf.keras
    cuda_built = "/".join(v for v in (build.cuda_version, build.cudnn_version) if v)
    if not cuda_built and tf.reported:
        cuda_built = "CUDA build, versions not reported" if build.is_cuda_build else "CPU-only build"
    cuda_spec = "/".join(v for v in (spec.cuda, spec.cudnn) if v)
    tfk_flavour, tfk_version = tfk.flavour or "", tfk.version or ""
    return {
        "name": c.name, "status": c.status, "target": c.target,
        "tf": (c.tf_installed or c.tf) + (f" ({c.tf_git})" if c.tf_git else "") if c.has_tf else "-",
        "tf_spec": c.tf,
        "tf_keras": tfk_flavour if tfk_version in tfk_flavour else (f"{tfk_flavour} {tfk_version}").strip(),
        "keras": sk.flavour or ("n/a" if sk.unavailable else "") or (f"{c.keras_flavour} {c.keras_version}").strip(),
        "keras_why": sk.unavailable or "",
        "python": host.python or c.python, "numpy": tf.numpy or "",
        "cuda_built": cuda_built, "cuda_spec": cuda_spec,
        "gpus": ", ".join(c.gpus_visible) or ("none" if tf.reported else ""),
        "gpu_problem": c.gpu_problem,
        "nvidia_smi": host.nvidia_smi,
        "cpu": f"{cpu.model or '?'} ({cpu.logical_cpus or '?'} logical CPUs)" if cpu.reported else "",
        "cpu_flags": " ".join(c.cpu_flags()),
        "onednn": "" if tf.onednn is None else ("on" if tf.onednn else "off"),
        "threads": f"intra {threads.intra_op} / inter {threads.inter_op}" if threads.reported else "",
        "image": c.image,
        "image_id": runner.image_id or "",
        "base": runner.base or spec.base_ref or "",
        "runner": c.runner + (f" ({runner.interpreter})" if runner.interpreter else ""),
        "preset": c.preset, "suite": c.suite_version + (f" ({c.suite_hash})" if c.suite_hash else ""),
        "finished": c.finished,
        "platform": host.platform or "",
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
