"""The groupfdr grid: chunks partition the replicates, each rule receives only its part of the preset,
the data of a replicate depend only on its data seed, and the schema names a misspelt key's path."""

import copy

import numpy as np
import pytest

from repro.config import preset_error, workflow_config
from repro.papers.groupfdr.experiment import run_chunk
from repro.papers.groupfdr.grid import (aggregate_config, chunk_targets, figure_config, replicates_of_chunk,
                                        run_config, runtime_config)
from tests.conftest import REPO

SCHEMA = REPO / "workflow/schemas/groupfdr.schema.yaml"
CONFIG = workflow_config(REPO)["groupfdr"]


@pytest.mark.parametrize("replicates,chunks", [(6, 1), (50, 2), (7, 3), (3, 5)])
def test_chunks_partition_the_replicates(replicates, chunks):
    cfg = {"replicates": replicates, "chunks": chunks}
    parts = [list(replicates_of_chunk(cfg, c)) for c in range(chunks)]
    assert sum(parts, []) == list(range(replicates))


def test_chunk_targets_cover_the_grid():
    cfg = CONFIG["small"]
    targets = chunk_targets(cfg)
    assert len(targets) == len(set(targets)) == sum(len(s["methods"]) for s in cfg["settings"].values()) * cfg["chunks"]


@pytest.mark.parametrize("scale", ["smoke", "small", "paper"])
def test_figure_only_keys_leave_the_upstream_parts_unchanged(scale):
    """Snakemake reruns a job whose params changed: Fig. 1's sweeps and figure_q must not reach the runs."""
    cfg = CONFIG[scale]
    edited = copy.deepcopy(cfg)
    edited["figure_q"] = 0.2
    edited["fig2_setting"] = "highdim"
    for spec in edited["settings"].values():
        spec["sweeps"] = {"amplitude": 99.0}
        spec["family"] = "nonlinear"
    for setting, spec in cfg["settings"].items():
        for method in spec["methods"]:
            assert run_config(edited, setting, method) == run_config(cfg, setting, method)
    assert runtime_config(edited) == runtime_config(cfg)
    assert aggregate_config(edited) != aggregate_config(cfg)  # the summary places each setting in Fig. 1
    assert figure_config(edited) != figure_config(cfg)


def test_a_symmetry_job_sees_only_its_design():
    from repro.papers.groupfdr.grid import symmetry_config, symmetry_targets

    cfg = CONFIG["small"]
    assert len(symmetry_targets(cfg)) == len(cfg["symmetry"]["designs"]) == 10
    part = symmetry_config(cfg, "high_r05_t3")
    assert list(part["designs"]) == ["high_r05_t3"] and part["designs"]["high_r05_t3"]["noise"] == "t3"


def test_a_run_sees_only_its_setting_and_method():
    cfg = CONFIG["small"]
    part = run_config(cfg, "nonlinear", "group_ngm")
    assert list(part["settings"]) == ["nonlinear"] and list(part["method_options"]) == ["group_ngm"]
    assert "sweeps" not in part["settings"]["nonlinear"] and "methods" not in part["settings"]["nonlinear"]
    assert run_config(cfg, "rho00", "bh")["method_options"] == {}


def test_the_data_of_a_replicate_depend_only_on_its_data_seed():
    """Every method of a setting sees the same data sets: the comparison is paired by replicate."""
    cfg = run_config(CONFIG["smoke"], "rho00", "bh")
    cfg["replicates"] = 2
    seeds = [11, 12]
    a = run_chunk(cfg, "rho00", "bh", 0, data_seeds=seeds, method_seeds=[1, 2])
    b = run_chunk(cfg, "rho00", "bh", 0, data_seeds=seeds, method_seeds=[3, 4])  # bh draws nothing
    strip = lambda out: [{k: v for k, v in r.items() if k != "runtime_s"} for r in out["records"]]
    assert strip(a) == strip(b)
    np.testing.assert_array_equal(a["example"]["stats"], b["example"]["stats"])
    c = run_chunk(cfg, "rho00", "bh", 0, data_seeds=[13, 14], method_seeds=[1, 2])
    assert not np.array_equal(a["example"]["stats"], c["example"]["stats"])
    with pytest.raises(ValueError, match="2 data seeds"):
        run_chunk({**cfg, "replicates": 3}, "rho00", "bh", 0, data_seeds=seeds, method_seeds=[1, 2])


@pytest.mark.parametrize("path", [("method_options", "group_ngm", "n_explian"), ("settings", "rho05", "rho_whithin"),
                                  ("settings", "rho05", "sweeps", "corelation"), ("realdata", "lag"),
                                  ("block1", "m"), ("symmetry", "replicats"),
                                  ("symmetry", "designs", "low_r05", "rho_whithin"),
                                  ("symmetry", "designs", "high_r08", "nois")])
def test_a_misspelt_key_is_rejected_with_its_path(path):
    preset = copy.deepcopy(CONFIG["small"])
    node = preset
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = 1
    message = preset_error(preset, SCHEMA, "groupfdr.small")
    assert message.startswith(".".join(("groupfdr.small", *path)) + ": unknown key"), message
