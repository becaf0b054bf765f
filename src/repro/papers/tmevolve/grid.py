"""The runs of a TMEvolve preset: the DAG's fan-out, read by ``workflow/rules/tmevolve.smk`` at parse time.

Pure Python (no numpy, no torch), so every Snakemake call stays fast.

Version 2 runs every method on two cohorts: the main (spatial) cohort, whose labels are set by the
arrangement of the patches, and the control cohort (version 1's WSI cohort, whose signal sits inside
single patches). Beside the trained methods, every task gets the oracles and random scores
(:data:`ORACLES`, fitted on the same folds) and, on the main cohort, the position-shuffle controls
(``shuffled_<method>``: the method retrained on slides whose patch positions are permuted).

Training jobs (:func:`train_jobs`): with ``train_bundle: method`` each trained run of a task is its
own job per repeat (``{cohort}/train/{task}/{method}/r{repeat}``); with ``train_bundle: task`` one job
per (cohort, task, repeat) trains every run of the task (``{cohort}/train/{task}/all/r{repeat}``), so a
preset whose runs are short does not pay a process and the torch import (~8 CPU-s here) per run. A
bundle is the task's methods and shuffle controls (``methods``: what Fig. 3 needs) or its ablations and
Q x K grid (``variants``), so the headline figure never waits for the ablations. The units and seeds are
the same either way.
"""

from __future__ import annotations

from repro.methods.tmevolve_variants import grid_name

__all__ = ["ORACLES", "SHUFFLED", "BUNDLES", "experiment_runs", "trained_runs", "train_jobs", "train_files", "job_file", "oracle_file",
           "base_method", "unit_ids", "cohorts", "cohort_files", "spatial_slide_ids"]

#: Scores that need no training: the planted log hazard, models on the true patch-type histogram and
#: on histogram + tumour-lymphocyte adjacency (fitted on the training folds), and random scores.
ORACLES = ("oracle_true", "oracle_composition", "oracle_arrangement", "random")
#: Prefix of the position-shuffle controls.
SHUFFLED = "shuffled_"
#: The job names of ``train_bundle: task``: a task's methods and shuffle controls, and its ablations and grid.
BUNDLES = ("methods", "variants")


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


def spatial_slide_ids(n_slides: int) -> list[str]:
    """The slide ids of the spatial cohort: ``P0000``, ``P0001``, ..."""
    return [f"P{i:04d}" for i in range(int(n_slides))]


def cohort_files(cfg: dict, cohort: str) -> dict[str, str]:
    """Bags and manifest of a cohort: the spatial cohort's slides are drawn by ``tmevolve_spatial_cohort``
    and read by the WSI stage in ``tmevolve_wsi``; any other cohort comes from the WSI stage's own
    rules (``results/wsi/{cohort}/``)."""
    if cohort == cfg["cohort"] and cfg.get("spatial") is not None:
        return {"bags": f"results/tmevolve/{cohort}/cohort/bags.h5",
                "manifest": f"results/tmevolve/{cohort}/cohort/manifest.csv"}
    return {"bags": f"results/wsi/{cohort}/bags/{cfg['encoder']}.h5", "manifest": f"results/wsi/{cohort}/manifest.csv"}


def train_jobs(cfg: dict) -> dict[str, list[str]]:
    """``{"cohort/task/job": [method, ...]}``: the training jobs of one repeat and the runs each trains
    (``train_bundle``: ``method``, one run per job, the default; ``task``, a task's methods and shuffle
    controls in one job and its ablations and grid in another, :data:`BUNDLES`)."""
    bundle = cfg.get("train_bundle", "method")
    if bundle not in ("method", "task"):
        raise ValueError(f"tmevolve: train_bundle must be 'method' or 'task', not {bundle!r}")
    compared = {*cfg["methods"], *[f"{SHUFFLED}{m}" for m in cfg.get("shuffle_controls", [])]}
    jobs: dict[str, list[str]] = {}
    for run in trained_runs(cfg):
        cohort, task, method = run.split("/")
        if method in BUNDLES:
            raise ValueError(f"tmevolve: a method may not be named {method!r} (a training bundle's name)")
        job = method if bundle == "method" else BUNDLES[0] if method in compared else BUNDLES[1]
        jobs.setdefault(f"{cohort}/{task}/{job}", []).append(method)
    return jobs


def train_files(cfg: dict, ext: str = "json", runs: list[str] | None = None) -> dict[str, str]:
    """``{path: cohort}`` of every training job's output over the repeats (of the jobs that train one of
    ``runs``, ``cohort/task/method``, if given)."""
    out = {}
    for key, methods in train_jobs(cfg).items():
        if runs is not None and not any(r.rsplit("/", 1)[0] == key.rsplit("/", 1)[0] and r.rsplit("/", 1)[1] in methods
                                        for r in runs):
            continue
        cohort, task, job = key.split("/")
        out.update({f"results/tmevolve/{cohort}/train/{task}/{job}/r{r}.{ext}": cohort for r in range(cfg["n_repeats"])})
    return out


def job_file(cfg: dict, run: str, repeat: int = 0, ext: str = "pt") -> str:
    """The output of the training job that trains ``run`` (``cohort/task/method``) in ``repeat``."""
    cohort, task, method = run.split("/")
    for key, methods in train_jobs(cfg).items():
        if key.startswith(f"{cohort}/{task}/") and method in methods:
            job = key.split("/")[2]
            return f"results/tmevolve/{cohort}/train/{task}/{job}/r{int(repeat)}.{ext}"
    raise ValueError(f"tmevolve: no training job trains {run!r}")


def oracle_file(cohort: str) -> str:
    """The oracles and random scores of a cohort, every task: ``{task: {oracle: summary}}``."""
    return f"results/tmevolve/{cohort}/oracles.json"


def unit_ids(cfg: dict) -> list[tuple[int, int]]:
    """The (repeat, fold) units of the repeated cross-validation."""
    return [(r, f) for r in range(cfg["n_repeats"]) for f in range(cfg["n_folds"])]
