"""A rate with no denominator is missing, never 0: in one evaluation, over seeds, in the claims and the figures.

The label bias is read on the agents who speak, the contrary rate on informed agents' stances, the lying
rate on stances: a silent population (every agent waits) or alpha = 0 (nobody informed) leaves them
without a denominator. Written as 0 they would read as "no bias", "honest", and a claim computed from
those zeros would PASS on seeds that measured nothing.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from repro.claims import INCONCLUSIVE, PASS, evaluate, load_claims
from repro.figures.lint import check
from repro.figures.style import MISSING_GID
from repro.io import write_json
from repro.papers.opinion.experiment import aggregate, outcome
from repro.papers.opinion.experiment import table1
from repro.papers.opinion.figures import fig2, sweep_table
from repro.papers.opinion.game import WAIT, GameConfig, OpinionGame
from repro.papers.opinion.graphs import scale_free

REPO = Path(__file__).resolve().parents[2]
CLAIM = "other_play_removes_conventions"


def _game(alpha: float, n_games: int = 4, seed: int = 0) -> OpinionGame:
    g = scale_free(20, 2, seed=0)
    game = OpinionGame(GameConfig(alpha=alpha), lambda B, rng: [g] * B, n_games, seed)
    game.reset(truth=torch.arange(n_games) % 2)
    return game


def _silent(game: OpinionGame, steps: int = 3) -> torch.Tensor:
    return torch.full((steps, game.informed.numel()), WAIT)


def test_a_silent_population_leaves_every_stance_rate_missing():
    game = _game(alpha=0.5)
    out = outcome(game, _silent(game), belief=torch.full((3, game.informed.numel()), 0.9))
    assert out["wait_rate"] == 1.0 and out["accuracy"] == 0.0  # waiting counts as wrong: defined
    for rate in ("label_bias", "contrary_rate", "lying_rate"):
        assert math.isnan(out[rate]), (rate, out[rate])


def test_at_alpha_zero_nobody_is_informed_so_the_contrary_rate_is_missing_and_the_label_bias_is_not():
    game = _game(alpha=0.0)
    assert not game.informed.any()
    says_one = torch.ones((3, game.informed.numel()), dtype=torch.long)  # the fixed-label convention
    out = outcome(game, says_one)
    assert math.isnan(out["contrary_rate"])
    assert out["label_bias"] == pytest.approx(0.5)  # truths alternate 0, 1: P(truth = 1) = 1/2


def test_a_speaking_population_keeps_its_rates_defined():
    game = _game(alpha=0.5)
    truth = game.truth[game.game].expand(3, -1)
    out = outcome(game, truth.clone(), belief=truth.float())
    assert out["label_bias"] == 0.0 and out["lying_rate"] == 0.0 and out["contrary_rate"] >= 0.0


def _records(n_seeds: int = 6, silent_seeds: tuple[int, ...] = (0, 1, 2, 3)) -> list[dict]:
    """The ablation at alpha 0: with other-play the agents of ``silent_seeds`` never speak; without it every
    agent of every seed says 1 (label bias 1/2)."""
    records = []
    for seed in range(n_seeds):
        game = _game(alpha=0.0, seed=seed)
        m = game.informed.numel()
        balanced = game.truth[game.game].expand(3, m).clone()  # speaks, no convention: bias 0
        with_op = _silent(game) if seed in silent_seeds else balanced
        without = torch.ones((3, m), dtype=torch.long)
        for method, stances in (("marl", with_op), ("marl_noop", without)):
            belief = torch.full((3, m), 0.1)  # every agent believes 0: saying 1 is a lie
            records.append({"family": "dynamic", "alpha": 0.0, "method": method, "seed": seed,
                            **outcome(game, stances, belief), "mean_return": 0.0})
    return records


def test_summary_means_and_counts_read_only_the_seeds_where_a_rate_is_defined():
    metrics, results, _ = aggregate(_records(), alphas=[0.0], ablation_alphas=[0.0], attention_alpha=0.0)
    assert results[results.method == "marl"].label_bias.isna().sum() == 4
    cell = metrics["summary"]["dynamic"]["marl"]["alpha0"]
    assert cell["label_bias"] == 0.0 and cell["n_seeds"]["label_bias"] == 2  # the two seeds that spoke
    assert math.isnan(cell["contrary_rate"]) and cell["n_seeds"]["contrary_rate"] == 0  # nobody informed
    assert cell["n_seeds"]["accuracy"] == 6
    node = metrics["other_play"]["dynamic_alpha0"]
    assert node["label_bias_with"] == 0.0 and node["n_with"] == 2 and node["n_without"] == 6
    reduction = node["label_bias_reduction"]
    assert len(reduction["values"]) == 6 and sum(math.isnan(v) for v in reduction["values"]) == 4
    t1 = table1(results)
    row = t1[(t1.method == "marl")].iloc[0]
    assert row.label_bias == 0.0 and row["n_label_bias"] == 2 and row["n_seeds"] == 6


def _verdict(tmp_path: Path, records: list[dict]):
    metrics, _, _ = aggregate(records, alphas=[0.0], ablation_alphas=[0.0], attention_alpha=0.0)
    write_json(tmp_path / "metrics.json", metrics)
    claims = [c for c in load_claims(REPO / "workflow/claims/opinion.yaml", REPO / "workflow/schemas/claims.schema.yaml")
              if c.id == CLAIM]
    (result,) = evaluate(claims, tmp_path / "metrics.json")
    return result


def test_the_other_play_claim_reads_only_seeds_that_spoke_and_is_inconclusive_on_too_few(tmp_path):
    # 2 of 6 seeds spoke with other-play: the reduction (1/2 on each) rests on 2 seeds, too few for a 95%
    # interval; read as zeros, the 4 silent seeds would have made it a PASS at n = 6
    result = _verdict(tmp_path, _records())
    assert result.status == INCONCLUSIVE and result.status != PASS
    assert "2 units cannot give" in result.reason and result.units_have == 2
    assert "4 of 6" in result.note and "undefined" in result.note


def test_the_other_play_claim_passes_when_every_seed_spoke(tmp_path):
    result = _verdict(tmp_path, _records(silent_seeds=()))
    assert result.status == PASS and result.interval.n == 6 and result.note == ""


def test_fig2_marks_a_missing_rate_n_a_and_draws_no_point_for_it():
    results = pd.DataFrame(_records())
    results = pd.concat([results, results.assign(alpha=1.0, contrary_rate=0.1)], ignore_index=True)
    table = pd.concat([sweep_table(results, "lying_rate"), sweep_table(results, "contrary_rate")], ignore_index=True)
    # every method's contrary rate at alpha 0 is missing: a row with n = 0, not a point at 0
    missing = table[(table.quantity == "contrary_rate") & (table.alpha == 0.0)]
    assert len(missing) == 2 and missing["mean"].isna().all() and (missing.n == 0).all()
    fig = fig2(table)
    marks = [t.get_text() for ax in fig.axes for t in ax.texts if t.get_gid() == MISSING_GID]
    assert marks == ["n/a (contrary)"]  # every method's contrary rate, at alpha 0 only: one mark, no names
    assert not check(fig), check(fig)
    for ax in fig.axes:
        for line in ax.lines:
            x, y = (np.asarray(v, dtype=float) for v in line.get_data())
            assert not np.any((x == 0.0) & (y == 0.0)), "a missing contrary rate drawn as 0"


def _attention_records(n_seeds: int, undefined_graph: str | None = None,
                       graphs: tuple[str, ...] = ("karate", "florentine", "static"),
                       centralities: tuple[str, ...] = ("degree", "pagerank")) -> list[dict]:
    """Static agents at alpha 0.5 whose trained attention follows degree (rho ~ 0.6) and whose untrained one does
    not (rho ~ 0); on ``undefined_graph`` rho is undefined for every seed (attention constant there)."""
    rng = np.random.default_rng(0)
    records = []
    for seed in range(n_seeds):
        att = {which: {g: {c: (float("nan") if g == undefined_graph else level + rng.normal(0, 0.05))
                           for c in centralities} for g in graphs}
               for which, level in (("attention", 0.6), ("attention_untrained", 0.0))}
        records.append({"family": "static", "alpha": 0.5, "method": "marl", "seed": seed, "accuracy": 0.5,
                        "agreement": 0.5, "wait_rate": 0.0, "label_bias": 0.0, "contrary_rate": 0.1,
                        "lying_rate": 0.1, "mean_return": 0.0, **att})
    return records


def _claims():
    return load_claims(REPO / "workflow/claims/opinion.yaml", REPO / "workflow/schemas/claims.schema.yaml")


def test_fig3_draws_the_interval_the_claims_decide_on(tmp_path):
    from repro.papers.opinion.figures import fig3, fig3_table

    metrics, _, _ = aggregate(_attention_records(6), alphas=[0.5], ablation_alphas=[], attention_alpha=0.5)
    write_json(tmp_path / "metrics.json", metrics)
    verdicts = {r.claim.id: r for r in evaluate(_claims(), tmp_path / "metrics.json")}
    table = fig3_table(metrics, _claims())
    for claim in ("attention_recovers_centrality", "attention_beyond_untrained"):
        (row,) = table[table.claim == claim].itertuples()
        iv = verdicts[claim].interval
        assert verdicts[claim].status == PASS and row.centrality == "degree"
        assert (row.rho, row.low, row.high, row.n) == (iv.estimate, iv.low, iv.high, 6)
    assert "bootstrap" in table.interval.iloc[0] and table[["low", "high"]].notna().all().all()
    rho = table[table.policy != "difference"]
    assert (rho.low >= -1).all() and (rho.high <= 1).all()  # a bootstrap of correlations stays a correlation
    fig = fig3(table)
    assert not check(fig), check(fig)
    assert any("n = 6 seeds" in t.get_text() for lg in fig.legends for t in [lg.get_title()])


def test_fig3_draws_no_interval_from_too_few_seeds_and_marks_an_undefined_rho(tmp_path):
    from repro.papers.opinion.figures import fig3, fig3_table

    metrics, _, _ = aggregate(_attention_records(2, undefined_graph="florentine"), alphas=[0.5], ablation_alphas=[],
                              attention_alpha=0.5)
    table = fig3_table(metrics, _claims())
    assert table[["low", "high"]].isna().all().all() and "at least 6 are needed" in table.interval.iloc[-1]
    flo = table[table.graph == "florentine"]
    assert flo.rho.isna().all() and (flo.n == 0).all() and "no unit has a defined value" in flo.interval.iloc[0]
    mean = table[(table.graph == "mean over graphs") & (table.policy == "trained")]
    assert (mean.n == 2).all() and mean.rho.notna().all()  # the other graphs' rhos: florentine left out
    fig = fig3(table)
    assert not check(fig), check(fig)
    marks = [t for ax in fig.axes for t in ax.texts if t.get_gid() == MISSING_GID]
    assert len(marks) == 4  # florentine, trained and untrained, in the two panels


def test_fig3_with_a_fetched_weighted_graph_wraps_its_five_comparisons_and_passes_the_lint():
    from repro.papers.opinion.figures import fig3, fig3_table

    graphs = ("karate", "les_miserables", "davis", "florentine", "static", "remote")
    cents = ("degree", "eigenvector", "pagerank", "weight", "strength")
    metrics, _, _ = aggregate(_attention_records(6, graphs=graphs, centralities=cents), alphas=[0.5],
                              ablation_alphas=[], attention_alpha=0.5)
    fig = fig3(fig3_table(metrics, _claims()))
    assert sum(ax.get_visible() for ax in fig.axes) == 5 and not check(fig), check(fig)
