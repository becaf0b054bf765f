"""The groupfdr DAG's grid (pure Python: ``workflow/rules/groupfdr.smk`` imports it at parse time)."""

from __future__ import annotations

__all__ = ["SIM_KEYS", "chunk_targets", "replicates_of_chunk"]

#: Keys of a setting that are arguments of :func:`repro.papers.groupfdr.synth.simulate_grouped`.
SIM_KEYS = ("n", "p", "d", "rho_within", "rho_between", "n_true", "amplitude", "response", "link", "sampling")


def chunk_targets(cfg: dict, prefix: str = "results/groupfdr/runs") -> list[str]:
    """Every chunk file of the grid setting x method x chunk (the aggregate's inputs)."""
    return [f"{prefix}/{s}/{m}/chunk{c}.json" for s, spec in cfg["settings"].items()
            for m in spec["methods"] for c in range(cfg["chunks"])]


def replicates_of_chunk(cfg: dict, chunk: int) -> range:
    """The replicate indices of ``chunk``: ``cfg["replicates"]`` split into ``cfg["chunks"]`` runs."""
    per = -(-cfg["replicates"] // cfg["chunks"])
    return range(chunk * per, min(cfg["replicates"], (chunk + 1) * per))
