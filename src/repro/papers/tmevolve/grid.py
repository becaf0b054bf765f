"""The runs of a TMEvolve preset: the DAG's fan-out, read by ``workflow/rules/tmevolve.smk`` at parse time.

Pure Python (no numpy, no torch), so every Snakemake call stays fast.

Version 2 runs every method on two cohorts: the main (spatial) cohort, whose labels are set by the
arrangement of the patches, and the control cohort (version 1's WSI cohort, whose signal sits inside
single patches). Beside the trained methods, every task gets the oracles and random scores
(:data:`ORACLES`, fitted on the same folds) and, on the main cohort, the position-shuffle controls
(``shuffled_<method>``: the method retrained on slides whose patch positions are permuted).
"""

from __future__ import annotations

from repro.methods.tmevolve_variants import grid_name

__all__ = ["ORACLES", "SHUFFLED", "experiment_runs", "trained_runs", "base_method", "unit_ids", "cohorts", "summary_path", "cohort_files"]

#: Scores that need no training: the planted log hazard, models on the true patch-type histogram and
#: on histogram + tumour-lymphocyte adjacency (fitted on the training folds), and random scores.
ORACLES = ("oracle_true", "oracle_composition", "oracle_arrangement", "random")
#: Prefix of the position-shuffle controls.
SHUFFLED = "shuffled_"


def base_method(method: str) -> str:
    """The registry key of a run's model: ``shuffled_tmevolve`` -> ``tmevolve``."""
    return method[len(SHUFFLED):] if method.startswith(SHUFFLED) else method


def cohorts(cfg: dict) -> list[str]:
    """The main cohort, then the control cohort (if any)."""
    return [cfg["cohort"], *([cfg["control_cohort"]] if cfg.get("control_cohort") else [])]


def trained_runs(cfg: dict) -> list[str]:
    """Every ``cohort/task/method`` that is trained: all methods on every task of both cohorts, the
    shuffle controls, ablations and the Q x K grid on the main cohort."""
    main = cfg["cohort"]
    runs = [f"{c}/{t}/{m}" for c in cohorts(cfg) for t in cfg["tasks"] for m in cfg["methods"]]
    runs += [f"{main}/{t}/{SHUFFLED}{m}" for t in cfg["tasks"] for m in cfg.get("shuffle_controls", [])]
    runs += [f"{main}/{t}/{m}" for t in cfg["ablation_tasks"] for m in cfg["ablations"]]
    grid = cfg["grid"]
    runs += [f"{main}/{grid['task']}/{grid_name(q, k)}" for q in grid["Q"] for k in grid["K"]]
    return list(dict.fromkeys(runs))


def experiment_runs(cfg: dict) -> list[str]:
    """Every ``cohort/task/method`` summary of the preset: the trained runs and the oracles."""
    runs = trained_runs(cfg)
    runs += [f"{c}/{t}/{o}" for c in cohorts(cfg) for t in cfg["tasks"] for o in ORACLES]
    return list(dict.fromkeys(runs))


def cohort_files(cfg: dict, cohort: str) -> dict[str, str]:
    """Bags and manifest of a cohort: the spatial cohort is drawn by ``tmevolve_spatial_cohort``,
    any other cohort comes from the WSI stage (``results/wsi/{cohort}/``)."""
    if cohort == cfg["cohort"] and cfg.get("spatial") is not None:
        return {"bags": f"results/tmevolve/{cohort}/cohort/bags.h5",
                "manifest": f"results/tmevolve/{cohort}/cohort/manifest.csv"}
    return {"bags": f"results/wsi/{cohort}/bags/{cfg['encoder']}.h5", "manifest": f"results/wsi/{cohort}/manifest.csv"}


def summary_path(run: str) -> str:
    """``cohort/task/method`` -> ``results/tmevolve/{cohort}/eval/{task}/{method}.json``."""
    cohort, task, method = run.split("/")
    return f"results/tmevolve/{cohort}/eval/{task}/{method}.json"


def unit_ids(cfg: dict) -> list[tuple[int, int]]:
    """The (repeat, fold) units of the repeated cross-validation."""
    return [(r, f) for r in range(cfg["n_repeats"]) for f in range(cfg["n_folds"])]
