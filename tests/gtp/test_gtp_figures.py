"""gtp's figures draw each claim that compares GTP with a baseline on their numbers as the checker decides it: GTP
minus the baseline, paired by seed, with the interval its verdict takes (a strict claim and its non-inferiority
twin each their own, the twin's dashed at its margin's edge), never two independent bars."""

from __future__ import annotations

import json

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from repro.claims import evaluate, load_claims, sample
from repro.figures import lint
from repro.papers.gtp.figures import fig1, fig1_table, fig2, fig2_table, fig3, fig3_table
from repro.papers.gtp.online import aggregate_online
from tests.conftest import REPO
from tests.foundation.test_figure_claims import drawn_bars

CLAIMS = load_claims(REPO / "workflow/claims/gtp.yaml", REPO / "workflow/schemas/claims.schema.yaml")
SEEDS = list(range(6))  # the fewest that give a 95% interval
LEARNERS = {"gtp": 0.0, "mppi": -2.0, "cem": -3.0, "diffusion_policy": -30.0, "td3bc": 5.0}  # planted offsets


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _online(rng) -> pd.DataFrame:
    """Per (task, method, seed, round) returns as online_tidy writes them: each seed shifts every method (paired)."""
    rows = []
    for task, base in (("pendulum", -200.0), ("mountaincar", 50.0)):
        seed_effect = rng.normal(0, 40, len(SEEDS))
        for method, offset in (*LEARNERS.items(), ("expert", 30.0), ("random", -300.0)):
            for s in SEEDS:
                for rnd in (0, 1, 2) if method in LEARNERS else (0,):
                    rows.append({"task": task, "method": method, "seed": s, "round": rnd, "env_steps": 200 * rnd,
                                 "ret": base + offset + 3.0 * rnd + seed_effect[s] + rng.normal(0, 1.0)})
    return pd.DataFrame(rows)


def _maze(rng, main_n=16) -> pd.DataFrame:
    """Per (method, budget, distance bucket, seed) scores as gtp's aggregate tabulates them (equal episodes per bucket)."""
    rows = []
    seed_effect = rng.normal(0, 0.1, len(SEEDS))
    for method, offset in (("gtp", 0.1), ("mppi", 0.0), ("cem", -0.05), ("diffusion_policy", -0.2), ("td3bc", -0.1)):
        for n in (8, main_n) if method in ("gtp", "mppi", "cem") else (main_n,):
            for bucket, (lo, hi) in enumerate(((2, 6), (9, 14), (20, 30))):
                for s in SEEDS:
                    v = float(np.clip(0.7 + offset - 0.15 * bucket + seed_effect[s] + rng.normal(0, 0.01), 0, 1))
                    rows.append({"method": method, "n_samples": n, "bucket": bucket, "dist_lo": lo, "dist_hi": hi,
                                 "seed": s, "score": v, "success": v, "evals": 2 * n, "denoiser": 0, "episodes": 3})
    return pd.DataFrame(rows)


def _metrics(online: pd.DataFrame, maze: pd.DataFrame, main_n=16) -> dict:
    """metrics.json's blocks the claims read, from the tables (per seed, in seed order), as the aggregate forms them."""
    seeds = sorted(set(maze.seed))
    ids = [f"seed{s}" for s in seeds]

    def per_seed(frame):
        return sample(frame.groupby("seed").score.mean().reindex(seeds).to_numpy(), ids, "seed")

    at_main = maze[maze.n_samples == main_n]
    far = maze[maze.bucket == maze.bucket.max()]
    round0 = online[online["round"] == 0]
    return {"online": aggregate_online(online),
            "control": {task: {"return": {m: sample(g.set_index("seed").ret.reindex(seeds).to_numpy(), ids, "seed")
                                          for m, g in part.groupby("method")}}
                        for task, part in round0.groupby("task")},
            "score": {m: per_seed(g) for m, g in at_main.groupby("method")},
            "far_success": {m: sample(g[g.n_samples == main_n].set_index("seed").success.reindex(seeds).to_numpy(),
                                      ids, "seed") for m, g in far.groupby("method")},
            "low_budget": {m: per_seed(g) for m, g in maze[maze.n_samples == 8].groupby("method")}}


def test_each_claim_is_drawn_with_the_interval_its_verdict_is_decided_on(tmp_path):
    rng = np.random.default_rng(5)
    online, maze = _online(rng), _maze(rng)
    path = tmp_path / "metrics.json"
    path.write_text(json.dumps(_metrics(online, maze)))
    metrics = json.loads(path.read_text())
    results = {r.claim.id: r for r in evaluate(CLAIMS, path) if r.interval is not None}
    tables = {"fig1": fig1_table(online, CLAIMS, metrics), "fig2": fig2_table(maze, 16, CLAIMS, metrics),
              "fig3": fig3_table(maze, 16, CLAIMS, metrics)}
    drawn = set()
    for name, table in tables.items():
        claims = table[table.panel == "claim"]
        for row in claims.itertuples():
            iv = results[row.claim].interval
            assert (row.mean, row.low, row.high, row.n_seeds) == (iv.estimate, iv.low, iv.high, iv.n), row.claim
            assert row.status == results[row.claim].status and row.method == f"gtp - {row.baseline}"
        drawn |= set(claims.claim)
    # every claim on the figures' numbers is drawn: the online and offline returns, far success, both budgets
    on_figures = {c.id for c in CLAIMS if c.metric.startswith(("online.", "control.pendulum", "control.mountaincar"))
                  or c.metric in ("far_success.gtp", "low_budget.gtp")
                  or (c.metric == "score.gtp" and c.rhs in ("score.mppi", "score.cem"))}
    assert drawn == on_figures
    # the figures draw exactly those bounds, one bar per claim, beside GTP's curve (never the baseline's alone)
    for build, table, panels in ((fig1, tables["fig1"], slice(2, None)), (fig2, tables["fig2"], slice(1, 2)),
                                 (fig3, tables["fig3"], slice(1, 2))):
        fig = build(table)
        bars = np.concatenate([drawn_bars(ax) for ax in fig.axes[panels]])
        want = table[table.panel == "claim"][["low", "high"]].to_numpy(float)
        np.testing.assert_allclose(np.sort(bars[:, 2:], axis=0), np.sort(want, axis=0), rtol=1e-12)
        assert lint.check(fig) == []


def test_a_non_inferiority_twin_is_dashed_at_its_margins_edge():
    """Fig. 3's main-budget slot: GTP above MPPI dashed at 0, its twin (non-inferior, margin 0.05) at -0.05."""
    rng = np.random.default_rng(5)
    maze = _maze(rng)
    table = fig3_table(maze, 16, CLAIMS, _metrics(_online(rng), maze))
    twin = table[table.claim == "gtp_matches_mppi"]
    assert (twin["op"] == "noninferior").all() and (twin["better"] == "higher").all() and (twin["tol"] == 0.05).all()
    fig = fig3(table)
    levels = sorted({round(seg[0][1], 12) for c in fig.axes[1].collections for seg in c.get_segments()
                     if len(seg) == 2 and seg[0][1] == seg[1][1]})
    assert levels == [-0.05, 0.0]
    assert lint.check(fig) == []


def test_too_few_seeds_draw_the_difference_without_a_bar_and_say_why():
    """At smoke (2 seeds) the checker forms no interval: the figures draw each paired mean difference alone."""
    rng = np.random.default_rng(5)
    online, maze = _online(rng), _maze(rng)
    online, maze = online[online.seed < 2], maze[maze.seed < 2]
    metrics = _metrics(online, maze)
    table = fig2_table(maze, 16, CLAIMS, metrics)
    claim = table[table.panel == "claim"]
    assert len(claim) == 1 and claim[["low", "high"]].isna().all().all() and claim["mean"].notna().all()
    fig = fig2(table)
    assert np.isnan(drawn_bars(fig.axes[1])[:, 2:]).all() and "no interval: 6 seeds" in fig.axes[1].get_xlabel()
    assert lint.check(fig) == []
