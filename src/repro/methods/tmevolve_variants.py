"""Registry names of TMEvolve's variants: the ablations (Table 3) and the Q x K grid (Table 4).

Pure Python, so that a rule file can list the runs of a preset without importing torch;
:mod:`repro.methods.tmevolve` registers a model under each of these names.
"""

from __future__ import annotations

__all__ = ["ABLATIONS", "GRID_Q", "GRID_K", "grid_name"]

#: Ablation variants (Table 3): registry key -> config overrides.
ABLATIONS: dict[str, dict] = {
    "tmevolve_nodiff": {"diffusion": False},
    "tmevolve_noevo": {"Q": 0},
    "tmevolve_nobal": {"balance_weight": 0.0},
    "tmevolve_randcon": {"concepts": "random"},
}
GRID_Q = (0, 1, 2, 3, 4)
GRID_K = (1, 2, 4, 8, 16)


def grid_name(q: int, k: int) -> str:
    """Registry key of the Q x K grid cell (Table 4), e.g. ``tmevolve_q3_k8``."""
    return f"tmevolve_q{q}_k{k}"
