"""The gtp DAG builds from an empty folder at scale=smoke; presets are valid; a misspelt key is refused;
a corrupt dataset is refused by name."""

import copy
import functools
import json

import numpy as np
import pandas as pd
import pytest
import yaml

from repro.config import preset_error, workflow_config
from tests.conftest import REPO

SCHEMA = REPO / "workflow/schemas/gtp.schema.yaml"
CONFIG = workflow_config(REPO)["gtp"]

TARGETS = ["reports/gtp_fig1.pdf", "reports/gtp_fig2.pdf", "reports/gtp_fig3.pdf", "reports/gtp_table1.md",
           "reports/gtp_table2.md", "reports/gtp_table3.md", "reports/gtp_table4.md", "results/gtp/metrics.json"]


@pytest.mark.slow
def test_smoke_dag_builds_from_empty_folder(smoke_dir, workflow_build):
    workflow_build(smoke_dir, TARGETS)
    metrics = json.loads((smoke_dir / "results/gtp/metrics.json").read_text())
    oracle = metrics["score"]["oracle"]
    assert oracle["unit"] == "seed" and np.allclose(oracle["values"], 1.0)  # the exact optimum is attained
    assert max(metrics["score"]["random"]["values"]) < 1.0
    assert set(metrics["score"]) == {"gtp", "mppi", "cem", "diffusion_policy", "td3bc", "oracle", "random"}
    ids = {m: s["ids"] for m, s in metrics["score"].items()}
    assert all(v == ids["gtp"] for v in ids.values())  # paired by seed
    control = metrics["control"]
    assert set(control) == {"pendulum", "mountaincar", "hopper"}  # classic control and the MuJoCo block
    for task, block in control.items():
        assert set(block["return"]) == {"gtp", "mppi", "cem", "diffusion_policy", "td3bc", "expert", "random"}
        assert all(s["ids"] == block["return"]["gtp"]["ids"] for s in block["return"].values())
    pend = control["pendulum"]["return"]
    assert np.mean(pend["expert"]["values"]) > np.mean(pend["random"]["values"])  # the controller holds or lifts the pole
    assert all(t in (smoke_dir / "reports/gtp_table2.md").read_text() for t in ("mountaincar", "hopper"))
    table4 = (smoke_dir / "reports/gtp_table4.md").read_text()  # TD3+BC's training diagnostics, every task
    assert all(t in table4 for t in ("maze", "pendulum", "mountaincar", "hopper")) and "q_pi_change_last_quarter" in table4
    table1 = (smoke_dir / "reports/gtp_table1.csv").read_text()
    assert "td3bc" in table1
    # gtp keeps its previous plan from an episode's second decision on: N - 1 prior samples there, N at the first
    k, n = CONFIG["smoke"]["diffusion"]["steps"], CONFIG["smoke"]["plan"]["n_samples"]
    gtp_row = pd.read_csv(smoke_dir / "reports/gtp_table1.csv").set_index("method").loc["gtp"]
    assert k * (n - 1) <= gtp_row["denoiser_calls_per_decision"] < k * n
    # the diffusion policy samples one window per plan.policy_execute (Ta) decisions: K per window, so between K / Ta
    # and 2 K / Ta per decision once an evaluation runs Ta or more steps (the maze's far bucket and Pendulum's 40-step
    # episodes do); K at every decision before chunks
    for name, table, block in (("maze", "gtp_table1.csv", CONFIG["smoke"]), ("pendulum", "gtp_table2.csv",
                                                                             CONFIG["smoke"]["control"])):
        k, ta = block["diffusion"]["steps"], block["plan"]["policy_execute"]
        rows = pd.read_csv(smoke_dir / f"reports/{table}")
        rows = rows[(rows.method == "diffusion_policy") & ((rows.task == name) if "task" in rows else True)]
        assert len(rows) == 1 and k / ta <= rows.denoiser_calls_per_decision.iloc[0] <= 2 * k / ta, name
    # the maze's diffusion policy is the goal-conditioned one, one per seed
    assert all((smoke_dir / f"results/gtp/models/seed{s}.goal_policy.pt").exists() for s in range(CONFIG["smoke"]["seeds"]))
    # online fine-tuning: every learner on every task and seed, paired; Fig. 1 has round 0 (offline) and each round
    online = metrics["online"]
    assert set(online) == {"pendulum", "mountaincar"}  # the smoke preset's MuJoCo block has no online entry
    learners = {"gtp", "mppi", "cem", "diffusion_policy", "td3bc"}
    rounds = CONFIG["smoke"]["control"]["online"]["rounds"]
    for task in ("pendulum", "mountaincar"):
        assert set(online[task]["final_return"]) == learners and online[task]["rounds"] == rounds
        assert all(s["ids"] == control[task]["return"]["gtp"]["ids"] for s in online[task]["final_return"].values())
    fig1 = pd.read_csv(smoke_dir / "reports/gtp_fig1.csv")
    curve = fig1[(fig1.task == "pendulum") & (fig1.method == "gtp")].sort_values("round")
    assert list(curve["round"]) == list(range(rounds + 1)) and curve.env_steps.is_monotonic_increasing
    assert curve.env_steps.iloc[0] == 0 and curve.env_steps.iloc[-1] > 0
    r0 = curve["mean"].iloc[0]  # round 0 is the offline evaluation itself
    assert np.isclose(r0, np.mean(control["pendulum"]["return"]["gtp"]["values"]))


@pytest.mark.parametrize("scale", ["smoke", "small", "paper"])
def test_presets_are_valid(scale):
    import jsonschema

    jsonschema.Draft202012Validator(yaml.safe_load(SCHEMA.read_text())).validate(CONFIG[scale])


def test_each_task_takes_its_blocks_settings():
    from repro.papers.gtp import grid

    small = CONFIG["small"]
    assert grid.control_tasks(small) == ["pendulum", "mountaincar", "halfcheetah", "hopper"]
    assert grid.control_data_config(small, "hopper") == {"dataset": small["mujoco"]["dataset"]}
    assert grid.control_td3bc_config(small, "pendulum")["td3bc"]["steps"] == small["control"]["td3bc"]["steps"]
    assert grid.control_td3bc_config(small, "hopper")["td3bc"]["steps"] == small["mujoco"]["td3bc"]["steps"]
    assert "behaviour" in grid.control_eval_inputs(small, "hopper", "0")
    assert "behaviour" not in grid.control_eval_inputs(small, "pendulum", "0")
    online = grid.online_targets(small)
    assert online and not any("hopper" in t or "halfcheetah" in t for t in online)  # no online entry in the block
    assert len(grid.control_eval_targets(small)) == 4 * small["seeds"]
    with pytest.raises(ValueError, match="task 'acrobot' is in no block"):
        grid.control_block(small, "acrobot")


@pytest.mark.parametrize("path", [("seedz",), ("plan", "n_sample"), ("dataset", "episode"), ("control", "online", "round"),
                                  ("mujoco", "dataset", "env_step")])
def test_a_misspelt_key_is_rejected_with_its_path(path):
    preset = copy.deepcopy(CONFIG["small"])
    functools.reduce(dict.__getitem__, path[:-1], preset)[path[-1]] = 1
    message = preset_error(preset, SCHEMA, "gtp.small")
    assert message.startswith(".".join(("gtp.small", *path)) + ": unknown key"), message


def test_impossible_value_is_refused():
    preset = copy.deepcopy(CONFIG["small"])
    preset["maze"] = "labyrinth"
    assert "maze" in preset_error(preset, SCHEMA, "gtp.small")
