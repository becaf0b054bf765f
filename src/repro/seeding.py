"""Job seeds: one integer per job, derived from the global seed and the job's identity.

Snakemake may run jobs in any order and on any machine, so a seed must not depend on scheduling.
:func:`job_seed` hashes the global seed together with named parts (the rule and its wildcards);
the same job always gets the same seed and two different jobs get unrelated streams.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["job_seed", "wildcards_dict", "make_rng", "torch_generator"]


def job_seed(global_seed: int, *parts: Any, **named: Any) -> int:
    """Return a 63-bit seed from ``global_seed`` and the job's identifying ``parts``/``named`` values.

    Named values are sorted by key, so ``job_seed(1, rule="x", fold=0)`` does not depend on the
    order in which Snakemake lists wildcards.
    """
    if isinstance(global_seed, bool) or not isinstance(global_seed, (int, np.integer)):
        raise ValueError(f"seed must be an integer, got {global_seed!r}")
    items = [str(p) for p in parts] + [f"{k}={named[k]}" for k in sorted(named)]
    payload = json.dumps([int(global_seed), items]).encode()
    return int.from_bytes(hashlib.sha256(payload).digest()[:8], "little") >> 1


def wildcards_dict(wildcards: Any) -> dict[str, str]:
    """Turn Snakemake's wildcards object (or any mapping) into a plain ``dict``."""
    if isinstance(wildcards, Mapping):
        return {str(k): str(v) for k, v in wildcards.items()}
    return {str(k): str(v) for k, v in dict(wildcards.items()).items()}


def make_rng(seed: int) -> np.random.Generator:
    """A NumPy generator (PCG64) for ``seed``: the library never touches the global RNG."""
    return np.random.default_rng(seed)


def torch_generator(seed: int, device: str = "cpu"):
    """A ``torch.Generator`` seeded with ``seed`` (imported lazily: torch is heavy)."""
    import torch

    gen = torch.Generator(device=device)
    gen.manual_seed(seed % (2**63))
    return gen
