"""Environment fingerprint: what exactly produced a results file.

Split in two: ``host_facts`` needs no TensorFlow (run by the parent process),
``tf_facts`` runs inside a worker after TensorFlow is imported. The seed
author's trap (a GPU benchmark that silently ran on the CPU) is why the GPUs
TensorFlow *actually sees* are recorded next to what the runner asked for.
"""
from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import sys
from typing import Any, Dict, List, Optional, Sequence

CPU_FLAGS = ("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile")
THREAD_ENV = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS",
              "TF_ENABLE_ONEDNN_OPTS", "TF_USE_LEGACY_KERAS", "CUDA_VISIBLE_DEVICES", "TF_XLA_FLAGS",
              "KERAS_BACKEND", "KERAS_HOME")


def cpu_info(path: str = "/proc/cpuinfo") -> Dict[str, Any]:
    model = platform.processor() or platform.machine()
    flags: List[str] = []
    try:
        with open(path) as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "model name" and model in ("", platform.machine(), platform.processor()):
                    model = value.strip()
                elif key == "flags" and not flags:
                    flags = value.split()
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover
        usable = os.cpu_count() or 1
    return {
        "model": model,
        "flags": {f: (f in flags) for f in CPU_FLAGS},
        "logical_cpus": os.cpu_count(),
        "usable_cpus": usable,
    }


def nvidia_smi() -> Optional[Dict[str, Any]]:
    """Driver and GPUs as nvidia-smi reports them; None when it is absent."""
    exe = shutil.which("nvidia-smi")
    if not exe:
        return None
    try:
        out = subprocess.run(
            [exe, "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=20,
        )
    except (OSError, subprocess.SubprocessError) as e:
        return {"error": str(e)}
    gpus = [dict(zip(("name", "driver_version", "memory"), [c.strip() for c in line.split(",")]))
            for line in out.stdout.splitlines() if line.strip()]
    return {"gpus": gpus, "driver_version": gpus[0]["driver_version"] if gpus else None, "rc": out.returncode}


def _normalized(name: str) -> str:
    """PEP 503 name: 'TensorFlow_CPU' -> 'tensorflow-cpu'."""
    return re.sub(r"[-_.]+", "-", name).lower()


def installed_packages() -> Dict[str, str]:
    """Every installed distribution and its version (pip freeze without pip), by PEP 503 name."""
    try:
        from importlib import metadata  # type: ignore  # Python 3.8+

        return {_normalized(str(d.metadata["Name"])): str(d.version) for d in metadata.distributions()
                if d.metadata["Name"]}
    except ImportError:  # Python 3.7
        import pkg_resources  # type: ignore

        return {_normalized(d.project_name): d.version for d in pkg_resources.working_set}


def _status_fields(names: Sequence[str], path: str = "/proc/self/status") -> Dict[str, str]:
    try:
        with open(path) as f:
            rows = [line.split(":", 1) for line in f]
    except OSError:
        return {}
    return {k.strip(): v.strip() for k, v in (r for r in rows if len(r) == 2) if k.strip() in names}


def _pids_max() -> Optional[str]:
    """The process-count limit of this process's cgroup (v2, then v1), as the kernel writes it ("max": none)."""
    for path in ("/sys/fs/cgroup/pids.max", "/sys/fs/cgroup/pids/pids.max"):
        try:
            with open(path) as f:
                return f.read().strip()
        except OSError:
            continue
    return None


def sandbox_facts() -> Dict[str, Any]:
    """How the cell was isolated, as seen from inside: user, network, suite writability, privileges, process limit."""
    try:
        interfaces = sorted(os.listdir("/sys/class/net"))
    except OSError:
        interfaces = []
    suite_dir = os.path.dirname(os.path.abspath(__file__))
    status = _status_fields(("CapBnd", "CapEff", "NoNewPrivs"))
    return {
        "uid": os.getuid(),
        "net_interfaces": interfaces,
        "suite_dir": suite_dir,
        "suite_writable": os.access(suite_dir, os.W_OK),
        "capabilities_bounding": status.get("CapBnd"),     # hex mask; all zero: every capability dropped
        "capabilities_effective": status.get("CapEff"),
        "no_new_privileges": status.get("NoNewPrivs") == "1" if "NoNewPrivs" in status else None,
        "pids_max": _pids_max(),
    }


def host_facts() -> Dict[str, Any]:
    return {
        "sandbox": sandbox_facts(),
        "python": {
            "version": platform.python_version(),
            "implementation": platform.python_implementation(),
            "executable": sys.executable,
        },
        "platform": platform.platform(),
        "cpu": cpu_info(),
        "env": {k: os.environ[k] for k in THREAD_ENV if k in os.environ},
        "nvidia_smi": nvidia_smi(),
    }


def tf_facts(tf: Any, compat: Any) -> Dict[str, Any]:
    """Facts only a process that imported TensorFlow can know."""
    import numpy

    version_mod = getattr(tf, "version", None)
    git = getattr(version_mod, "GIT_VERSION", None) or getattr(tf, "GIT_VERSION", None)
    threads: Dict[str, Any] = {}
    threading = getattr(getattr(tf, "config", None), "threading", None)
    if threading is not None:
        threads = {
            "intra_op": threading.get_intra_op_parallelism_threads(),
            "inter_op": threading.get_inter_op_parallelism_threads(),
        }
    keras: Dict[str, Any] = {}
    for api in ("tf.keras", "keras"):
        try:
            keras[api] = compat.keras(api, check_mode=False).describe()
        except Exception as e:  # NotApplicable or import error: say why
            keras[api] = {"api": api, "unavailable": str(e)}
    gpus: List[str] = []
    gpu_error = None
    try:
        gpus = compat.list_gpus()
    except Exception as e:  # pragma: no cover - depends on the driver
        gpu_error = str(e)
    return {
        "tensorflow": {"version": tf.__version__, "git_version": git},
        "keras": keras,
        "numpy": numpy.__version__,
        "threads": threads,
        "build_info": compat.build_info(),
        "gpus_visible": gpus,
        "gpu_error": gpu_error,
        "onednn": compat.onednn_enabled(),
        "packages": installed_packages(),
    }


def nightly_keras() -> Optional[str]:
    """keras-nightly's version when it, and no Keras release, provides the ``keras`` module."""
    packages = installed_packages()
    if "keras" in packages:
        return None
    return packages.get("keras-nightly")
