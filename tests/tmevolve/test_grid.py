"""The runs of every preset: each ``{method}`` is a registered MIL model, and listing them is light."""

import subprocess
import sys

import pytest

from repro.methods.mil import MIL_MODELS
from repro.papers.tmevolve.experiment import TASKS
from repro.papers.tmevolve.grid import (BUNDLES, ORACLES, base_method, experiment_runs, job_file, train_files, train_jobs,
                                       trained_runs)
from tests.conftest import REPO
from repro.config import workflow_config

CONFIG = workflow_config(REPO)


@pytest.mark.parametrize("scale", ["smoke", "small", "paper"])
def test_every_run_of_a_preset_is_a_registered_model_on_a_known_task(scale):
    cfg = CONFIG["tmevolve"][scale]
    runs = experiment_runs(cfg)
    assert len(runs) == len(set(runs))
    for run in runs:
        cohort, task, method = run.split("/")
        assert cohort in (cfg["cohort"], cfg["control_cohort"]), run
        assert task in TASKS and (method in ORACLES or base_method(method) in MIL_MODELS), run
    grid = cfg["grid"]
    assert sum(f"/{grid['task']}/tmevolve_q" in r for r in runs) == len(grid["Q"]) * len(grid["K"])
    # every trained method and every oracle on every task of both cohorts; shuffle controls on the main one
    for cohort in (cfg["cohort"], cfg["control_cohort"]):
        for task in cfg["tasks"]:
            assert {f"{cohort}/{task}/{m}" for m in [*cfg["methods"], *ORACLES]} <= set(runs)
    assert f"{cfg['cohort']}/survival/shuffled_tmevolve" in runs


def test_listing_the_runs_imports_no_numerical_library():
    """The rule file calls experiment_runs at parse time: every Snakemake call would pay for torch."""
    code = ("import sys; from repro.papers.tmevolve.grid import experiment_runs, job_file, train_files, train_jobs; "
            "print(sorted(m for m in ('torch', 'numpy', 'pandas', 'scipy') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={"PYTHONPATH": str(REPO / "src")})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


@pytest.mark.parametrize("scale", ["smoke", "small", "paper"])
@pytest.mark.parametrize("bundle", ["method", "task"])
def test_the_training_jobs_train_every_run_once(scale, bundle):
    """Bundled or not, the jobs cover every trained run exactly once; a bundle holds the runs of one task."""
    cfg = {**CONFIG["tmevolve"][scale], "train_bundle": bundle}
    jobs = train_jobs(cfg)
    runs = [f"{key.rsplit('/', 1)[0]}/{m}" for key, methods in jobs.items() for m in methods]
    assert sorted(runs) == sorted(trained_runs(cfg))
    if bundle == "method":
        assert all(key.rsplit("/", 1)[1] == methods[0] and len(methods) == 1 for key, methods in jobs.items())
    else:   # per (cohort, task): the methods and shuffle controls, and (main cohort) the ablations and grid
        assert {key.rsplit("/", 1)[1] for key in jobs} <= set(BUNDLES)
        compared = {*cfg["methods"], *[f"shuffled_{m}" for m in cfg["shuffle_controls"]]}
        assert all(set(ms) <= compared for key, ms in jobs.items() if key.endswith(f"/{BUNDLES[0]}"))
        assert not any(set(ms) & compared for key, ms in jobs.items() if key.endswith(f"/{BUNDLES[1]}"))
    assert len(train_files(cfg)) == len(jobs) * cfg["n_repeats"]
    model = job_file(cfg, f"{cfg['cohort']}/survival/tmevolve")
    assert model.replace(".pt", ".json") in train_files(cfg)
    assert model.endswith(f"/survival/{'tmevolve' if bundle == 'method' else BUNDLES[0]}/r0.pt")
    # Fig. 3's runs (main cohort, survival, methods and shuffle controls) never need an ablation's job
    fig3 = train_files(cfg, runs=[f"{cfg['cohort']}/survival/{m}" for m in cfg["methods"]])
    assert fig3 and all(f"/{cfg['cohort']}/train/survival/" in p for p in fig3)
    assert not any("/tmevolve_no" in p or f"/{BUNDLES[1]}/" in p for p in fig3)


def test_an_unknown_bundle_is_refused():
    with pytest.raises(ValueError, match="train_bundle"):
        train_jobs({**CONFIG["tmevolve"]["smoke"], "train_bundle": "cohort"})
