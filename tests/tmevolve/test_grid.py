"""The runs of every preset: each ``{method}`` is a registered MIL model, and listing them is light."""

import subprocess
import sys

import pytest
import yaml

from repro.methods.mil import MIL_MODELS
from repro.papers.tmevolve.experiment import TASKS
from repro.papers.tmevolve.grid import experiment_runs
from tests.conftest import REPO

CONFIG = yaml.safe_load((REPO / "config.yaml").read_text())


@pytest.mark.parametrize("scale", ["smoke", "small", "paper"])
def test_every_run_of_a_preset_is_a_registered_model_on_a_known_task(scale):
    cfg = CONFIG["tmevolve"][scale]
    runs = experiment_runs(cfg)
    assert len(runs) == len(set(runs))
    for run in runs:
        task, method = run.split("/")
        assert task in TASKS and method in MIL_MODELS, run
    grid = cfg["grid"]
    assert sum(r.startswith(f"{grid['task']}/tmevolve_q") for r in runs) == len(grid["Q"]) * len(grid["K"])


def test_listing_the_runs_imports_no_numerical_library():
    """The rule file calls experiment_runs at parse time: every Snakemake call would pay for torch."""
    code = ("import sys; from repro.papers.tmevolve.grid import experiment_runs; "
            "print(sorted(m for m in ('torch', 'numpy', 'pandas', 'scipy') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={"PYTHONPATH": str(REPO / "src")})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
