"""Claims: checks against hand-written metrics, schema errors, and the AE report over 19 papers."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import yaml

from repro.aereport import collect, load_papers, render_html, render_markdown
from repro.claims import FAIL, INCONCLUSIVE, NOT_RUN, PASS, UNDECIDABLE, evaluate, interval, load_claims, rate, sample
from repro.io import write_json

REPO = Path(__file__).resolve().parents[2]
SCHEMA = REPO / "workflow/schemas/claims.schema.yaml"

CLAIMS = {
    "paper": "demo",
    "title": "Demo paper",
    "rebuild": "A demo: hand-written metrics.",
    "kind": "reproduction",
    "kind_reason": "the demo's own experiment",
    "claims": [
        {"id": "above", "claim": "a > 0.9", "source": "abstract", "metric": "a",
         "check": {"op": ">", "rhs": 0.9, "unit": "none"}, "scale": "smoke"},
        {"id": "below", "claim": "a < 0.5", "source": "Table 1", "metric": "a",
         "check": {"op": "<", "rhs": 0.5, "unit": "none"}, "scale": "smoke"},
        {"id": "beats", "claim": "ours > baseline", "source": "Table 2", "metric": "m.ours",
         "check": {"op": ">", "rhs": "m.base", "unit": "fold_seed"}, "scale": "smoke"},
        {"id": "close", "claim": "coverage ~ 0.95", "source": "Fig. 1", "metric": "cov",
         "check": {"op": "within", "rhs": 0.95, "tol": 0.03, "unit": "replicate"}, "scale": "small"},
        {"id": "absent", "claim": "x exists", "source": "abstract", "metric": "nothing.here",
         "check": {"op": ">", "rhs": 0, "unit": "seed"}, "scale": "smoke"},
        {"id": "summary", "claim": "s > 0", "source": "abstract", "metric": "s",
         "check": {"op": ">", "rhs": 0, "unit": "seed"}, "scale": "smoke"},
        {"id": "decay", "claim": "variance decays", "source": "Fig. 1", "metric": "var",
         "check": {"op": "<", "rhs": 0, "unit": "seed", "statistic": "slope"}, "scale": "smoke"},
        {"id": "fitted", "claim": "exponent > 1", "source": "Fig. 3", "metric": "fit",
         "check": {"op": ">", "rhs": 1, "unit": "width_seed"}, "scale": "smoke"},
        {"id": "every", "claim": "FDR <= 0.1 in every setting", "source": "Fig. 2", "metric": "fdp",
         "check": {"op": "<=", "rhs": 0.1, "unit": "replicate", "each": True}, "scale": "smoke"},
    ],
}


def _write(tmp_path: Path, doc: dict, name: str = "demo") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def _metrics(rng: np.random.Generator) -> dict:
    ids = [f"fold{f}_seed{s}" for f in range(5) for s in range(2)]
    base = rng.normal(0.6, 0.08, size=len(ids))  # fold difficulty, shared by both methods
    return {
        "a": 0.93,
        "s": 0.2,
        "m": {"ours": {"mean": 0.0, "per_unit": sample(base + 0.05 + rng.normal(0, 0.005, len(ids)), ids, "fold_seed")},
              "base": sample(base, ids, "fold_seed")},
        "cov": rate(1900, 2000, "replicate"),
        "var": sample(-0.5 * np.arange(8) + rng.normal(0, 0.05, 8), [f"n{n}" for n in range(8)], "seed", x=np.arange(8)),
        "fdp": {"linear": sample(rng.uniform(0, 0.1, 400), range(400), "replicate"),
                "nonlinear": sample(rng.uniform(0.1, 0.3, 400), range(400), "replicate")},
        "fit": interval(1.3, 1.1, 1.5, 12, "width_seed", method="fit (Wald)"),
        "provenance": {"scale": "smoke"},
    }


def test_checks_give_pass_fail_inconclusive_and_not_run(tmp_path):
    claims = load_claims(_write(tmp_path, CLAIMS), SCHEMA)
    metrics = tmp_path / "metrics.json"
    write_json(metrics, _metrics(np.random.default_rng(0)))
    status = {r.claim.id: r for r in evaluate(claims, metrics)}
    assert status["above"].status == PASS and status["below"].status == FAIL  # exact numbers
    assert status["beats"].status == PASS  # +0.05 on every unit, paired: the fold noise cancels
    assert status["beats"].interval.low > 0 and status["beats"].interval.n == 10
    assert status["close"].status == PASS  # 0.95, Wilson [0.940, 0.959] inside 0.95 +- 0.03
    assert "expected to hold from scale small" in status["close"].note
    assert status["absent"].status == NOT_RUN and "nothing.here" in status["absent"].reason
    assert status["summary"].status == INCONCLUSIVE and "summary only" in status["summary"].reason
    assert status["decay"].status == PASS and status["decay"].interval.high < 0
    assert status["every"].status == FAIL and "nonlinear: FAIL" in status["every"].reason
    assert status["fitted"].status == PASS and status["fitted"].interval.n == 12


def test_interval_rows_give_the_interval_each_verdict_is_decided_on(tmp_path):
    """The rows a figure's table takes its claims' intervals from are the verdicts' own: each claim's
    interval (the paired difference for 'beats', the slope for 'decay', Wilson for 'close'), and for an
    'each' claim every setting's at the Bonferroni level, the one the verdict shows among them."""
    from repro.claims import INTERVAL_COLUMNS, interval_rows
    from repro.stats.intervals import wilson_interval

    claims = load_claims(_write(tmp_path, CLAIMS), SCHEMA)
    metrics = _metrics(np.random.default_rng(0))
    write_json(tmp_path / "metrics.json", metrics)
    results = {r.claim.id: r for r in evaluate(claims, tmp_path / "metrics.json")}
    rows = interval_rows(claims, metrics)
    assert all(tuple(r) == INTERVAL_COLUMNS for r in rows)
    by = {(r["claim"], r["setting"]): r for r in rows}
    assert "absent" not in {r["claim"] for r in rows}  # no metric, no row
    for cid in ("beats", "close", "decay", "fitted"):
        row, iv = by[(cid, "")], results[cid].interval
        assert (row["estimate"], row["low"], row["high"], row["level"], row["n"]) == \
            (iv.estimate, iv.low, iv.high, iv.level, iv.n)
        assert row["status"] == results[cid].status
    assert by[("beats", "")]["threshold"] == 0.0 and "paired difference" in by[("beats", "")]["interval"]
    assert "slope" in by[("decay", "")]["interval"] and by[("close", "")]["threshold"] == 0.95
    assert np.isnan(by[("summary", "")]["low"]) and by[("summary", "")]["interval"].startswith("none: ")
    assert {s for c, s in by if c == "every"} == {"linear", "nonlinear"}
    for setting in ("linear", "nonlinear"):
        row = by[("every", setting)]
        assert row["level"] == pytest.approx(1 - 0.05 / 2) and "Bonferroni over 2 settings" in row["interval"]
    shown = results["every"].reason.split("shown: ")[1].split(")")[0]
    assert (by[("every", shown)]["low"], by[("every", shown)]["high"]) == \
        (results["every"].interval.low, results["every"].interval.high)
    ids = ["above", "close"]
    assert [r["claim"] for r in interval_rows(claims, metrics, ids)] == ids
    cov = wilson_interval(1900, 2000, level=0.95)
    assert (by[("close", "")]["low"], by[("close", "")]["high"]) == (cov.low, cov.high)
    with pytest.raises(ValueError, match="no claim"):
        interval_rows(claims, metrics, ["nosuch"])


def test_writers_reject_impossible_evidence():
    with pytest.raises(ValueError, match="one id"):
        sample([0.1, 0.2], ["a"], "seed")
    with pytest.raises(ValueError, match="successes <= trials"):
        rate(5, 4, "seed")
    with pytest.raises(ValueError, match="low <= estimate <= high"):
        interval(2.0, 0.0, 1.0, 10, "seed")
    assert interval(1.0, float("nan"), 2.0, 10, "seed") is None  # a fit that failed: NOT RUN, not judged


def test_units_must_match_and_pairs_must_cover_the_same_units(tmp_path):
    doc = {**CLAIMS, "claims": [CLAIMS["claims"][2]]}
    metrics = _metrics(np.random.default_rng(1))
    metrics["m"]["base"]["unit"] = "seed"
    write_json(tmp_path / "metrics.json", metrics)
    (result,) = evaluate(load_claims(_write(tmp_path, doc), SCHEMA), tmp_path / "metrics.json")
    assert result.status == INCONCLUSIVE and "units" in result.reason
    metrics = _metrics(np.random.default_rng(1))
    metrics["m"]["base"]["ids"][0] = "fold9_seed9"
    write_json(tmp_path / "metrics.json", metrics)
    (result,) = evaluate(load_claims(_write(tmp_path, doc), SCHEMA), tmp_path / "metrics.json")
    assert result.status == INCONCLUSIVE and "different units" in result.reason


def test_missing_metrics_file_is_not_run(tmp_path):
    claims = load_claims(_write(tmp_path, CLAIMS), SCHEMA)
    assert {r.status for r in evaluate(claims, tmp_path / "none.json")} == {NOT_RUN}


def test_a_comparison_without_a_unit_is_rejected_naming_the_claim(tmp_path):
    import copy

    doc = copy.deepcopy(CLAIMS)
    del doc["claims"][2]["check"]["unit"]
    with pytest.raises(ValueError, match=r"claim 'beats' is a comparison without a unit"):
        load_claims(_write(tmp_path, doc), SCHEMA)


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d["claims"][0].update(metirc="a"), "metirc"),              # typo in a key
    (lambda d: d["claims"][0]["check"].update(op="=>"), "=>"),            # unknown operator
    (lambda d: d["claims"][0].pop("scale"), "scale"),                     # missing field
    (lambda d: d["claims"][3]["check"].pop("tol"), "within"),             # within without tol
    (lambda d: d["claims"][6]["check"].update(statistic="median"), "median"),  # unknown statistic
    (lambda d: d["claims"].append(dict(d["claims"][0])), "duplicate"),    # repeated id
])
def test_claim_file_with_a_typo_is_rejected(tmp_path, mutate, message):
    import copy

    doc = copy.deepcopy(CLAIMS)
    mutate(doc)
    with pytest.raises(ValueError, match=message):
        load_claims(_write(tmp_path, doc), SCHEMA)


def test_paper_key_must_match_file_name(tmp_path):
    with pytest.raises(ValueError, match="does not match"):
        load_claims(_write(tmp_path, CLAIMS, name="other"), SCHEMA)


def test_every_committed_claim_file_is_valid():
    """Every claim has a kind at every scale with its reason, a substitute names what it stands in for
    (the loader refuses it otherwise), and a non-inferiority margin comes from the paper or the metric's
    scale, never the data."""
    papers = {p["key"] for p in load_papers(REPO / "workflow/papers.yaml")}
    for path in sorted((REPO / "workflow/claims").glob("*.yaml")):
        assert path.stem in papers, f"{path.name} names no paper of workflow/papers.yaml"
        claims = load_claims(path, SCHEMA)
        assert claims, path
        for c in claims:
            assert all(c.kind_at(s) in ("reproduction", "substitute", "code_check") for s in ("smoke", "small", "paper"))
            assert c.kind_reason, (path.name, c.id)
            if c.op == "noninferior":
                assert c.margin_source.startswith(("paper:", "the metric's scale")), (path.name, c.id)


def test_report_lists_all_19_papers_and_marks_unbuilt_ones(tmp_path):
    claims_dir = tmp_path / "claims"
    claims_dir.mkdir()
    _write(claims_dir, CLAIMS)
    papers = load_papers(REPO / "workflow/papers.yaml") + [{"number": 20, "key": "demo", "title": "Demo"}]
    write_json(tmp_path / "results/demo/metrics.json", _metrics(np.random.default_rng(2)))
    bench = tmp_path / "benchmarks/demo/x.tsv"
    bench.parent.mkdir(parents=True)
    bench.write_text("s\th:m:s\tmax_rss\n12.5\t0:00:12\t100\n")
    entries = collect(papers, built={"demo": ["reports/demo_fig1.pdf"]}, claims_dir=claims_dir, schema_path=SCHEMA,
                      results_dir=tmp_path / "results", benchmarks_dir=tmp_path / "benchmarks")
    md = render_markdown(entries, scale="smoke")
    assert len(papers) == 20 and all(f"## {p['number']}. {p['key']}" in md for p in papers)
    assert md.count("NOT RUN: this paper is not built yet.") == 19
    assert "snakemake reports/demo_fig1.pdf --config scale=smoke" in md
    assert "12 s over 1 jobs" in md
    assert ("reproduction verdicts: 5 PASS, 2 FAIL, 1 INCONCLUSIVE; substitute verdicts: none; code checks "
            "(our code, counted apart): none; NOT RUN: 1") in md
    assert "<td><b>FAIL</b></td>" in render_html(entries, scale="smoke")


def test_command_line_prints_each_verdict_and_names_a_bad_file(tmp_path, capsys):
    from repro.claims import main

    (tmp_path / "workflow/claims").mkdir(parents=True)
    (tmp_path / "workflow/schemas").mkdir()
    (tmp_path / "workflow/schemas/claims.schema.yaml").write_text(SCHEMA.read_text())
    _write(tmp_path / "workflow/claims", CLAIMS)
    write_json(tmp_path / "results/demo/metrics.json", _metrics(np.random.default_rng(3)))
    assert main(["demo", "--repo", str(tmp_path), "--results", str(tmp_path / "results")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == len(CLAIMS["claims"]) and out[0].startswith("demo.above: PASS")
    assert main(["missing", "--repo", str(tmp_path)]) == 2 and "missing.yaml" in capsys.readouterr().out


def test_too_few_units_to_reach_the_level_is_inconclusive_not_pass(tmp_path):
    from repro.stats.intervals import min_units

    assert [min_units(level) for level in (0.9, 0.95, 0.9875)] == [5, 6, 8]  # 2^(1-n) <= 1 - level
    doc = {**CLAIMS, "claims": [CLAIMS["claims"][2]]}
    for n, expected in ((5, INCONCLUSIVE), (6, PASS)):
        ids = [f"fold{i}" for i in range(n)]
        base = np.linspace(0.5, 0.7, n)
        metrics = {"m": {"ours": sample(base + 0.2, ids, "fold_seed"), "base": sample(base, ids, "fold_seed")}}
        write_json(tmp_path / "metrics.json", metrics)
        (result,) = evaluate(load_claims(_write(tmp_path, doc), SCHEMA), tmp_path / "metrics.json")
        assert result.status == expected, (n, result.reason)
    ids = [f"fold{i}" for i in range(5)]
    write_json(tmp_path / "metrics.json", {"m": {"ours": sample(np.ones(5), ids, "fold_seed"),
                                                  "base": sample(np.zeros(5), ids, "fold_seed")}})
    (result,) = evaluate(load_claims(_write(tmp_path, doc), SCHEMA), tmp_path / "metrics.json")
    assert result.status == INCONCLUSIVE and "at least 6 are needed" in result.reason


def test_units_whose_value_is_undefined_are_left_out_and_counted(tmp_path):
    """A unit whose quantity has no denominator (a rate over nobody) is written null (None or NaN): the
    verdict reads the defined units only, says how many were left out, and a paired comparison leaves out a
    unit undefined on either side. Planted: +0.2 on every defined unit."""
    doc = {**CLAIMS, "claims": [CLAIMS["claims"][2], {**CLAIMS["claims"][2], "id": "zero", "metric": "m.ours",
                                                      "check": {"op": ">", "rhs": 0, "unit": "fold_seed"}}]}
    claims = load_claims(_write(tmp_path, doc), SCHEMA)

    def run(ours_missing, base_missing, n=10):
        ids = [f"fold{i}" for i in range(n)]
        base = np.linspace(0.5, 0.7, n)
        ours = [None if i in ours_missing else v + 0.2 for i, v in enumerate(base)]
        theirs = [float("nan") if i in base_missing else v for i, v in enumerate(base)]
        write_json(tmp_path / "metrics.json", {"m": {"ours": sample(ours, ids, "fold_seed"),
                                                      "base": sample(theirs, ids, "fold_seed")}})
        return {r.claim.id: r for r in evaluate(claims, tmp_path / "metrics.json")}

    full = run((), ())
    assert full["beats"].status == PASS and full["beats"].interval.n == 10 and full["beats"].note == ""
    out = run((0, 1), (2,))  # paired: 3 units undefined on one side or the other, 7 left
    assert out["beats"].status == PASS and out["beats"].interval.n == 7
    assert out["beats"].interval.estimate == pytest.approx(0.2)
    assert "undefined for 3 of 10 units (fold0, fold1, fold2)" in out["beats"].note
    assert out["zero"].interval.n == 8 and "undefined for 2 of 10 units" in out["zero"].note
    assert np.isfinite(out["zero"].interval.estimate)
    few = run(tuple(range(6)), ())  # 4 defined: too few for a 95% interval, whatever the zeros would say
    assert few["beats"].status == INCONCLUSIVE and "4 units cannot give" in few["beats"].reason
    assert few["beats"].units_have == 4 and "undefined for 6 of 10 units" in few["beats"].note
    none = run(tuple(range(10)), ())
    assert none["zero"].status == INCONCLUSIVE and "no unit has a defined value (10 undefined)" in none["zero"].reason


def test_require_paired_names_the_method_whose_seeds_or_units_differ():
    from repro.claims import require_paired

    same = {"ours": {"f0": 11, "f1": 12}, "base": {"f0": 11, "f1": 12}}
    require_paired(same, "demo")  # paired: no error
    with pytest.raises(ValueError, match=r"demo: 'base' is not paired with 'ours' \(other seeds on units \['f1'\]"):
        require_paired({"ours": {"f0": 11, "f1": 12}, "base": {"f0": 11, "f1": 99}}, "demo")
    with pytest.raises(ValueError, match=r"'base' is not paired .*other units \['f2'\]"):
        require_paired({"ours": {"f0": 11, "f1": 12}, "base": {"f0": 11, "f1": 12, "f2": 13}}, "demo")
    # methods may cover different units when allowed, but shared units must agree
    require_paired({"ours": {"n4": 1, "n8": 2}, "shift": {"n4": 1}}, "demo", same_units=False)
    with pytest.raises(ValueError, match="other seeds"):
        require_paired({"ours": {"n4": 1, "n8": 2}, "shift": {"n4": 7}}, "demo", same_units=False)


def test_clustered_units_are_resampled_by_cluster(tmp_path):
    """Units that share a source of randomness (4 student inits of one distilled set) are not 4
    observations. Planted: the paired difference is +1 within a cluster and the clusters' offsets are
    large and centred at 0, so the method does NOT beat the baseline. Per unit (48 units) the
    interval excludes 0 often; per cluster it does not pass: 12 clusters straddle 0, and 2 clusters are
    too few to decide at all."""
    doc = {**CLAIMS, "claims": [CLAIMS["claims"][2]]}
    claims = load_claims(_write(tmp_path, doc), SCHEMA)
    rng = np.random.default_rng(4)

    def metrics(n_clusters, clustered):
        ids = [f"s{k}i{i}" for k in range(n_clusters) for i in range(4)]
        cluster = [f"s{k}" for k in range(n_clusters) for _ in range(4)]
        offsets = rng.normal(0, 3, n_clusters)
        offsets -= offsets.mean()  # the true mean difference over distillations is 0
        base = rng.normal(0.5, 0.1, len(ids))
        ours = base + np.repeat(offsets, 4) + rng.normal(0, 0.01, len(ids))
        c = cluster if clustered else None
        return {"m": {"ours": sample(ours, ids, "fold_seed", cluster=c), "base": sample(base, ids, "fold_seed", cluster=c)}}

    def run(doc):
        write_json(tmp_path / "metrics.json", doc)
        return evaluate(claims, tmp_path / "metrics.json")[0]

    clustered = metrics(12, clustered=True)
    flat = {"m": {m: {k: v for k, v in s.items() if k != "cluster"} for m, s in clustered["m"].items()}}
    per_unit, by_cluster = run(flat), run(clustered)
    assert per_unit.interval.n == 48
    assert by_cluster.status == INCONCLUSIVE and by_cluster.interval.n == 12
    assert "over clusters of fold_seed" in by_cluster.interval.method
    assert by_cluster.interval.low < 0 < by_cluster.interval.high
    # cluster intervals are wider than unit intervals on the same data
    assert by_cluster.interval.high - by_cluster.interval.low > per_unit.interval.high - per_unit.interval.low
    few = run(metrics(2, clustered=True))
    assert few.status == INCONCLUSIVE and "2 clusters of units" in few.reason
    with pytest.raises(ValueError, match="cluster"):
        sample([0.1, 0.2], ["a", "b"], "seed", cluster=["k"])


def test_one_cluster_keeps_its_estimate_without_an_interval(tmp_path):
    """One distillation seed (one cluster of units): no interval, the same INCONCLUSIVE 'one unit only', but
    the compared quantity (the mean paired difference) is kept for a figure to draw without a bar."""
    from repro.claims import interval_rows

    doc = {**CLAIMS, "claims": [CLAIMS["claims"][2]]}
    claims = load_claims(_write(tmp_path, doc), SCHEMA)
    ids, cluster = ["s0i0", "s0i1"], ["s0", "s0"]
    metrics = {"m": {"ours": sample([0.7, 0.9], ids, "fold_seed", cluster=cluster),
                     "base": sample([0.6, 0.6], ids, "fold_seed", cluster=cluster)}}
    write_json(tmp_path / "metrics.json", metrics)
    (result,) = evaluate(claims, tmp_path / "metrics.json")
    assert result.status == INCONCLUSIVE and result.interval is None and "one unit only" in result.reason
    (row,) = interval_rows(claims, metrics)
    assert row["estimate"] == pytest.approx(0.2) and np.isnan(row["low"]) and row["n"] == 1


def test_cross_validation_folds_are_widened_for_their_overlap(tmp_path):
    """The same paired fold values give a wider interval when the sample says they are the folds of a
    cross-validation (n_test / n_train = 1/4): sqrt(1 + 25 / 4) = 2.69 times the bootstrap's
    half-widths, named in the method; a slope over such folds is refused, not silently uncorrected."""
    doc = {**CLAIMS, "claims": [CLAIMS["claims"][2]]}
    claims = load_claims(_write(tmp_path, doc), SCHEMA)
    rng = np.random.default_rng(5)
    ids = [f"r{r}_fold{f}" for r in range(5) for f in range(5)]
    base = rng.normal(0.6, 0.05, 25)
    ours = base + 0.02 + rng.normal(0, 0.02, 25)

    def run(cv):
        write_json(tmp_path / "metrics.json", {"m": {"ours": sample(ours, ids, "fold_seed", cv=cv),
                                                     "base": sample(base, ids, "fold_seed", cv=cv)}})
        return evaluate(claims, tmp_path / "metrics.json")[0]

    plain, corrected = run(None), run(0.25)
    assert "Nadeau-Bengio" in corrected.interval.method and corrected.interval.estimate == plain.interval.estimate
    ratio = (corrected.interval.high - corrected.interval.low) / (plain.interval.high - plain.interval.low)
    assert ratio == pytest.approx(np.sqrt(1 + 25 * 0.25))
    slope = load_claims(_write(tmp_path, {**CLAIMS, "claims": [CLAIMS["claims"][6]]}), SCHEMA)
    write_json(tmp_path / "metrics.json", {"var": sample(base, ids, "seed", x=np.arange(25), cv=0.25)})
    refused = evaluate(slope, tmp_path / "metrics.json")[0]
    assert refused.status == INCONCLUSIVE and "cross-validation folds" in refused.reason
    with pytest.raises(ValueError, match="cv is n_test / n_train"):
        sample([0.1, 0.2], ["a", "b"], "seed", cv=0)


def test_a_metric_key_with_dots_is_found_and_a_missing_one_is_named():
    from repro.claims import MetricMissing, lookup_metric

    metrics = {"kbv": {"smollm2-t0.7": {"values": [1.0]}, "smollm2": 2.0}, "runs": [{"a": 3.0}]}
    assert lookup_metric(metrics, "kbv.smollm2-t0.7") == {"values": [1.0]}
    assert lookup_metric(metrics, "kbv.smollm2") == 2.0          # a plain key still wins
    assert lookup_metric(metrics, "runs.0.a") == 3.0
    by_alpha = {"wait": {"alpha0": 0.9, "alpha0.25": 0.6, "alpha1": {"x": 0.1}}}
    assert lookup_metric(by_alpha, "wait.alpha0.25") == 0.6     # 'alpha0' is a key too, but leaves '25' unresolved
    assert lookup_metric(by_alpha, "wait.alpha0") == 0.9 and lookup_metric(by_alpha, "wait.alpha1.x") == 0.1
    with pytest.raises(MetricMissing, match="wait.alpha0.5"):
        lookup_metric(by_alpha, "wait.alpha0.5")
    with pytest.raises(MetricMissing, match="kbv.smollm2-t0.8"):
        lookup_metric(metrics, "kbv.smollm2-t0.8")


def test_put_sample_stores_where_lookup_metric_finds_it():
    from repro.claims import lookup_metric, put_sample

    metrics = {"avg_acc": {"blocks": {"him": 0.0}}}
    put_sample(metrics, ("avg_acc", "blocks", "m2le"), [0.5, 0.7], [0, 1], "seed")
    assert lookup_metric(metrics, "avg_acc.blocks.m2le") == sample([0.5, 0.7], [0, 1], "seed")
    assert lookup_metric(metrics, "avg_acc.blocks.him") == 0.0   # siblings kept


def test_a_partial_build_marks_every_verdict_and_names_the_runs_a_missing_metric_waits_for(tmp_path):
    claims = load_claims(_write(tmp_path, CLAIMS), SCHEMA)
    metrics = tmp_path / "metrics.json"
    full = _metrics(np.random.default_rng(0))
    write_json(metrics, {**full, "partial": {"missing_runs": ["c/t/a", "c/t/b", "c/t/c", "c/t/d"], "n_runs": 9}})
    status = {r.claim.id: r for r in evaluate(claims, metrics)}
    assert status["above"].status == PASS and "partial build: 4 of 9 runs not built (c/t/a, c/t/b, c/t/c, ...)" \
        in status["above"].note
    assert status["absent"].status == NOT_RUN and "partial build: 4 of 9" in status["absent"].reason
    # the same evidence from a complete build carries no such note
    write_json(metrics, {**full, "partial": {"missing_runs": [], "n_runs": 9}})
    assert not any("partial" in r.note for r in evaluate(claims, metrics))


DIAGNOSTICS = [
    {"id": "gap", "question": "how far ahead is ours, per unit?", "metric": "m.ours", "rhs": "m.base",
     "unit": "fold_seed", "reading": "above 0: ours ahead"},
    {"id": "shifted", "question": "ours above 0.6?", "metric": "m.ours", "rhs": 0.6, "unit": "fold_seed",
     "reading": "a number subtracted"},
    {"id": "probe", "question": "from another file", "file": "probe/probe.json", "metric": "nll.trait",
     "unit": "seed", "reading": "below 0: absorbed"},
    {"id": "elsewhere", "question": "a file not built", "file": "late.json", "metric": "x", "unit": "seed",
     "reading": "-"},
]


def test_a_diagnostic_gets_the_claims_interval_and_no_verdict(tmp_path):
    """A diagnostic is measured by the claims' bootstrap: the paired gap gives the same interval as the
    claim 'ours > base' on the same units (up to its own resamples); a numeric rhs shifts the interval of the metric by that
    number; a JSON file of the results folder other than metrics.json is read; an unbuilt file or an
    absent metric is named, not an error."""
    from repro.claims import load_diagnostics, measure

    doc = {**CLAIMS, "claims": [CLAIMS["claims"][2]], "diagnostics": DIAGNOSTICS}
    path = _write(tmp_path, doc)
    claims, diagnostics = load_claims(path, SCHEMA), load_diagnostics(path, SCHEMA)
    assert [d.id for d in diagnostics] == ["gap", "shifted", "probe", "elsewhere"] and len(claims) == 1
    results_dir = tmp_path / "results/demo"
    write_json(results_dir / "metrics.json", _metrics(np.random.default_rng(5)))
    write_json(results_dir / "probe/probe.json", {"nll": {"trait": sample([-0.5, -0.4, -0.45, -0.52, -0.48, -0.41],
                                                                          range(6), "seed")}})
    gap, shifted, probe, elsewhere = measure(diagnostics, results_dir)
    (claim,) = evaluate(claims, results_dir / "metrics.json")
    assert gap.interval.estimate == claim.interval.estimate and gap.interval.n == claim.interval.n == 10
    width = claim.interval.high - claim.interval.low  # the two bootstraps draw their own resamples
    assert gap.interval.low == pytest.approx(claim.interval.low, abs=0.1 * width) and gap.interval.low > 0
    assert gap.interval.high == pytest.approx(claim.interval.high, abs=0.1 * width)

    unshifted = measure([replace(diagnostics[1], rhs=0.0)], results_dir)[0].interval
    for a, b in ((shifted.interval.estimate, unshifted.estimate - 0.6), (shifted.interval.low, unshifted.low - 0.6),
                 (shifted.interval.high, unshifted.high - 0.6)):
        assert a == pytest.approx(b)
    assert probe.interval.estimate == pytest.approx(-0.46) and probe.interval.high < 0
    assert elsewhere.interval is None and elsewhere.reason == "not measured: late.json not built"
    (missing,) = measure([replace(diagnostics[2], metric="nll.topic")], results_dir)
    assert missing.interval is None and "nll.topic absent from probe/probe.json" in missing.reason
    assert all(m.interval is None and "not built" in m.reason for m in measure(diagnostics, None))


def test_diagnostics_are_reported_beside_the_claims_without_a_verdict(tmp_path):
    claims_dir = tmp_path / "claims"
    claims_dir.mkdir()
    _write(claims_dir, {**CLAIMS, "diagnostics": DIAGNOSTICS[:2]})
    write_json(tmp_path / "results/demo/metrics.json", _metrics(np.random.default_rng(2)))
    entries = collect([{"number": 20, "key": "demo", "title": "Demo"}], built={"demo": []}, claims_dir=claims_dir,
                      schema_path=SCHEMA, results_dir=tmp_path / "results", benchmarks_dir=tmp_path / "benchmarks")
    md = render_markdown(entries, scale="smoke")
    assert "reproduction verdicts: 5 PASS, 2 FAIL, 1 INCONCLUSIVE;" in md and "NOT RUN: 1." in md  # diagnostics: no verdict
    section = md.split("Diagnostics (not claims of the paper")[1]
    assert "| `gap`: how far ahead is ours, per unit? |" in section and "m.ours - m.base (over fold_seed, 95%)" in section
    assert "<td><code>shifted</code>: ours above 0.6?</td>" in render_html(entries, scale="smoke")


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d.update(file="../../etc/x.json"), "diagnostic 'gap'"),
    (lambda d: d.pop("reading"), "'reading' is a required property"),
])
def test_a_bad_diagnostic_is_rejected_naming_it(tmp_path, mutate, message):
    from repro.claims import load_diagnostics

    diagnostic = dict(DIAGNOSTICS[0])
    mutate(diagnostic)
    with pytest.raises(ValueError, match=message):
        load_diagnostics(_write(tmp_path, {**CLAIMS, "diagnostics": [diagnostic]}), SCHEMA)
    with pytest.raises(ValueError, match="duplicate diagnostic id 'gap'"):
        load_diagnostics(_write(tmp_path, {**CLAIMS, "diagnostics": [DIAGNOSTICS[0], DIAGNOSTICS[0]]}), SCHEMA)
    with pytest.raises(ValueError, match="duplicate diagnostic id 'above'"):
        load_diagnostics(_write(tmp_path, {**CLAIMS, "diagnostics": [{**DIAGNOSTICS[0], "id": "above"}]}), SCHEMA)


# ---- kinds, substitutions, non-inferiority, floors, ceilings, units needed -------------------------------------

def _one(check: dict, **extra) -> dict:
    """A claim file of one claim 'c' reading metric 'm' with ``check``."""
    return {**CLAIMS, "claims": [{"id": "c", "claim": "c", "source": "abstract", "metric": "m", "check": check,
                                  "scale": "smoke", **extra}]}


SUBSTITUTED = {**CLAIMS, "kind": "substitute", "kind_reason": "a small model for a large one",
               "substitutes": [{"paper": "a 49B model", "here": "a 135M model"}]}


@pytest.mark.parametrize("mutate, message", [
    (lambda d: (d.pop("kind"), d.pop("kind_reason")), r"claim '\w+' .*'kind' is a required property"),  # no kind anywhere
    (lambda d: d.pop("kind_reason"), "'kind_reason' is a dependency of 'kind'"),                       # a kind without its reason
    (lambda d: d["claims"][0].update(kind="code_check"), r"claim 'above'.*'kind_reason' is a dependency of 'kind'"),
    (lambda d: d.update(kind="guess"), "guess"),                                                    # not a kind
    (lambda d: d.update(kind={"smoke": "code_check", "small": "substitute"}), "kind"),             # a scale left out
    (lambda d: d.pop("substitutes"), r"claim 'above' is a substitute at scale smoke but names no substitution"),
    (lambda d: d["substitutes"][0].pop("here"), "'here' is a required property"),                  # half a pair
    (lambda d: d["substitutes"][0].update(scales=["small", "paper"]), "substitute at scale smoke"),  # not at smoke
    (lambda d: d.pop("rebuild"), "'rebuild' is a required property"),
])
def test_a_claim_without_a_kind_or_a_substitute_without_its_pair_is_refused(tmp_path, mutate, message):
    import copy

    doc = copy.deepcopy(SUBSTITUTED)
    mutate(doc)
    with pytest.raises(ValueError, match=message):
        load_claims(_write(tmp_path, doc), SCHEMA)


def test_kinds_resolve_per_claim_and_per_scale(tmp_path):
    doc = {**SUBSTITUTED, "claims": [
        dict(CLAIMS["claims"][0]),
        {**CLAIMS["claims"][1], "kind": "code_check", "kind_reason": "an identity"},
        {**CLAIMS["claims"][2], "kind": {"smoke": "code_check", "small": "substitute", "paper": "reproduction"},
         "kind_reason": "scripted agents at smoke", "substitutes": [{"paper": "7 models", "here": "SmolLM2", "scales": ["small"]}]}]}
    above, below, beats = load_claims(_write(tmp_path, doc), SCHEMA)
    assert above.kind_at("small") == "substitute" and [str(s) for s in above.substitutes_at("small")] == ["a 135M model (in place of a 49B model)"]
    assert below.kind_at("paper") == "code_check" and below.kind_own and not above.kind_own
    assert [beats.kind_at(s) for s in ("smoke", "small", "paper")] == ["code_check", "substitute", "reproduction"]
    assert [str(s) for s in beats.substitutes_at("small")] == ["SmolLM2 (in place of 7 models)"] and not beats.substitutes_at("paper")


@pytest.mark.parametrize("check, message", [
    ({"op": "noninferior", "rhs": "m.base", "unit": "seed", "margin_source": "the scale"}, "'margin' is a required property"),
    ({"op": "noninferior", "rhs": "m.base", "unit": "seed", "margin": 0.05}, "'margin_source' is a required property"),
    ({"op": "noninferior", "rhs": "m.base", "unit": "seed", "margin": 0, "margin_source": "the scale"}, "margin"),
    ({"op": ">", "rhs": "m.base", "unit": "seed", "margin": 0.05, "margin_source": "the scale"}, "noninferior"),
])
def test_a_noninferiority_check_without_its_margin_and_source_is_refused(tmp_path, check, message):
    with pytest.raises(ValueError, match=message):
        load_claims(_write(tmp_path, _one(check)), SCHEMA)


def _paired(tmp_path, diff, n=20, seed=0, noise=0.02):
    """metrics.json with 'm.ours' - 'm.base' = ``diff`` + noise per seed, paired."""
    rng = np.random.default_rng(seed)
    ids = [f"s{i}" for i in range(n)]
    base = rng.normal(0.5, 0.1, n)
    write_json(tmp_path / "metrics.json", {"m": {"ours": sample(base + diff + rng.normal(0, noise, n), ids, "seed"),
                                                  "base": sample(base, ids, "seed")}})
    return tmp_path / "metrics.json"


def test_noninferiority_planted_tie_passes_and_a_deficit_beyond_the_margin_fails(tmp_path):
    """A true tie: superiority stays INCONCLUSIVE, non-inferiority within a margin of 0.05 PASSes. A true
    deficit of 0.1, twice the margin, FAILs; a deficit inside the margin whose interval crosses the
    margin's edge stays INCONCLUSIVE; ``better: lower`` mirrors it."""
    superior = {"op": ">", "rhs": "m.base", "unit": "seed"}
    matches = {"op": "noninferior", "rhs": "m.base", "unit": "seed", "margin": 0.05,
               "margin_source": "the metric's scale: 5% of [0, 1]"}
    sup, = load_claims(_write(tmp_path, _one(superior, metric="m.ours") | {"claims": [
        {**_one(superior)["claims"][0], "metric": "m.ours"}]}), SCHEMA)
    ni, = load_claims(_write(tmp_path, {**CLAIMS, "claims": [{**_one(matches)["claims"][0], "metric": "m.ours"}]}), SCHEMA)
    assert "m.ours > m.base - 0.05 (non-inferiority; margin: the metric's scale" in ni.describe_check()
    tie = _paired(tmp_path, 0.0)
    (r_sup,), (r_ni,) = evaluate([sup], tie), evaluate([ni], tie)
    assert r_sup.status == INCONCLUSIVE and r_sup.interval.low < 0 < r_sup.interval.high
    assert r_ni.status == PASS and r_ni.interval.low > -0.05
    deficit = _paired(tmp_path, -0.1)
    assert evaluate([ni], deficit)[0].status == FAIL
    edge = _paired(tmp_path, -0.05, noise=0.05)
    assert evaluate([ni], edge)[0].status == INCONCLUSIVE
    lower = replace(ni, better="lower")  # lower is better: ours may be at most 0.05 above
    assert evaluate([lower], _paired(tmp_path, 0.0))[0].status == PASS
    assert evaluate([lower], _paired(tmp_path, 0.1))[0].status == FAIL


def test_outside_is_within_mirrored_a_difference_either_way_passes_a_tie_fails(tmp_path):
    """'outside' ("differs", either direction) against rhs 0 with tol 0.05, by hand on intervals: PASS when
    the interval clears the band on either side, FAIL when it lies inside it, INCONCLUSIVE when it
    straddles an edge; 'within' gives the opposite verdict on the same intervals. Then end to end on
    planted paired differences of +0.2, -0.2 and 0 (noise 0.02, 20 seeds: an interval of about +-0.01)."""
    from repro.claims import verdict
    from repro.stats.intervals import Interval

    def iv(lo, hi):
        return Interval((lo + hi) / 2, lo, hi, 0.95, 20, "bootstrap")

    for (lo, hi), expect in [((0.06, 0.3), PASS), ((-0.3, -0.06), PASS), ((-0.04, 0.04), FAIL),
                             ((0.01, 0.08), INCONCLUSIVE), ((-0.08, 0.08), INCONCLUSIVE)]:
        assert verdict(iv(lo, hi), "outside", 0.0, 0.05) == expect, (lo, hi)
        mirrored = {PASS: FAIL, FAIL: PASS, INCONCLUSIVE: INCONCLUSIVE}[expect]
        assert verdict(iv(lo, hi), "within", 0.0, 0.05) == mirrored, (lo, hi)
    check = {"op": "outside", "rhs": 0, "tol": 0.05, "unit": "seed"}
    claim, = load_claims(_write(tmp_path, _one(check)), SCHEMA)
    assert claim.describe_check().startswith("|m - 0| > 0.05")

    def planted(diff, noise=0.02):
        values = diff + np.random.default_rng(0).normal(0, noise, 20)
        write_json(tmp_path / "metrics.json", {"m": sample(values, [f"s{i}" for i in range(20)], "seed")})
        return evaluate([claim], tmp_path / "metrics.json")[0]

    assert planted(0.2).status == PASS and planted(-0.2).status == PASS and planted(0.0).status == FAIL
    assert planted(0.05, noise=0.05).status == INCONCLUSIVE
    # what would decide an open one: an estimate beyond the band is on its way to PASS, one inside it to FAIL
    beyond, inside = planted(0.15, noise=0.3), planted(0.01, noise=0.1)
    assert beyond.status == inside.status == INCONCLUSIVE
    assert "(PASS side)" in beyond.to_decide and "(FAIL side)" in inside.to_decide
    for bad, message in [({k: v for k, v in check.items() if k != "tol"}, "'outside' needs a numeric rhs and a tol"),
                         ({**check, "tol": 0}, "'outside' needs a positive tol")]:
        with pytest.raises(ValueError, match=message):
            load_claims(_write(tmp_path, _one(bad)), SCHEMA)


def test_a_metric_at_its_ceiling_is_undecidable_not_fail(tmp_path):
    """Coverage 1.0 in both arms on every seed: the strict '>' FAILs, the ceiling reports it UNDECIDABLE
    with its reason; a baseline with room under the bound keeps its verdict; in an 'each' claim one
    setting at the ceiling makes the claim UNDECIDABLE unless another setting FAILs."""
    ceiling = {"bound": 1.0, "headroom": 0.01, "reason": "coverage is a share bounded by 1"}
    doc = {**CLAIMS, "claims": [{**_one({"op": ">", "rhs": "m.base", "unit": "seed"})["claims"][0], "metric": "m.ours",
                                 "ceiling": ceiling}]}
    claim, = load_claims(_write(tmp_path, doc), SCHEMA)
    ids = [f"s{i}" for i in range(8)]
    write_json(tmp_path / "metrics.json", {"m": {"ours": sample(np.ones(8), ids, "seed"), "base": sample(np.ones(8), ids, "seed")}})
    r, = evaluate([claim], tmp_path / "metrics.json")
    assert r.status == UNDECIDABLE and "ceiling: coverage is a share bounded by 1" in r.reason and "would have been FAIL" in r.reason
    write_json(tmp_path / "metrics.json", {"m": {"ours": sample(np.full(8, 0.9), ids, "seed"),
                                                  "base": sample(np.full(8, 0.9), ids, "seed")}})
    assert evaluate([claim], tmp_path / "metrics.json")[0].status == FAIL  # room to rise: a tie fails '>'
    each = replace(claim, each=True)
    rng = np.random.default_rng(0)
    noisy = rng.normal(0.5, 0.1, 8)
    write_json(tmp_path / "metrics.json", {"m": {
        "ours": {"tied": sample(np.ones(8), ids, "seed"), "open": sample(noisy + np.tile([0.1, -0.1], 4), ids, "seed")},
        "base": {"tied": sample(np.ones(8), ids, "seed"), "open": sample(noisy, ids, "seed")}}})
    r, = evaluate([each], tmp_path / "metrics.json")
    assert r.status == UNDECIDABLE and "tied: UNDECIDABLE" in r.reason
    with pytest.raises(ValueError, match="ceiling needs a one-sided check"):
        load_claims(_write(tmp_path, {**CLAIMS, "claims": [{**CLAIMS["claims"][3], "ceiling": ceiling}]}), SCHEMA)


def test_units_needed_planted_effect_passes_about_half_the_time_at_the_predicted_n(tmp_path):
    """A planted effect of 0.3 sd: a pilot of 12 units is INCONCLUSIVE; at the number of units it
    predicts, fresh samples of the same effect PASS in about half of the repeats (the interval's lower
    end is then the effect minus its half-width, which the estimate clears about half the time), and at
    half that number far less often. A pilot of 4 units (too few for any interval) predicts from its
    per-unit spread; an estimate on the threshold shows no effect."""
    from repro.claims import units_to_decide
    from repro.stats.intervals import bootstrap_interval

    def planted(n, rng, exact=False):
        x = rng.normal(size=n)
        if exact:  # the pilot's mean and sd are the planted ones
            x = (x - x.mean()) / x.std(ddof=1)
        return 0.3 + x

    claim, = load_claims(_write(tmp_path, _one({"op": ">", "rhs": 0, "unit": "seed"})), SCHEMA)
    rng = np.random.default_rng(7)
    write_json(tmp_path / "metrics.json", {"m": sample(planted(12, rng, exact=True), range(12), "seed")})
    pilot, = evaluate([claim], tmp_path / "metrics.json")
    assert pilot.status == INCONCLUSIVE and pilot.units_have == 12
    need = pilot.units_needed
    assert 35 <= need <= 60, need  # about (1.96 / 0.3)^2 = 43, up to the scatter of the pilot's bootstrap
    assert f"at about n = {need} (unit: seed; now n = 12)" in pilot.to_decide

    def pass_rate(n, repeats=200):
        hits = 0
        for k in range(repeats):
            iv = bootstrap_interval(planted(n, rng), level=0.95, seed=k, n_boot=2000)
            hits += iv.low > 0
        return hits / repeats

    at_need, at_half = pass_rate(need), pass_rate(need // 2)
    assert 0.4 <= at_need <= 0.8, at_need
    assert at_half < at_need - 0.1, (at_half, at_need)

    write_json(tmp_path / "metrics.json", {"m": sample(planted(4, rng, exact=True), range(4), "seed")})
    few, = evaluate([claim], tmp_path / "metrics.json")
    assert few.status == INCONCLUSIVE and "at least 6 are needed" in few.reason and few.units_have == 4
    assert 35 <= few.units_needed <= 60, few.units_needed

    centred = planted(12, rng, exact=True) - 0.3  # the estimate sits on the threshold
    write_json(tmp_path / "metrics.json", {"m": sample(centred, range(12), "seed")})
    flat, = evaluate([claim], tmp_path / "metrics.json")
    assert flat.status == INCONCLUSIVE and flat.units_needed is None and "no effect visible" in flat.to_decide
    # folds of a cross-validation: the overlap bounds the interval, no number of folds decides a small effect
    from repro.stats.intervals import Interval
    iv = Interval(0.02, -0.1, 0.14, 0.95, 25, "bootstrap mean, CV-corrected (Nadeau-Bengio, x2.69)")
    need, text = units_to_decide(claim, iv, 0.0, cv=0.25)
    assert need is None and "no number of folds decides" in text


def test_the_report_shows_kind_note_substitutions_floor_and_counts_each_kind_apart(tmp_path, capsys):
    """A substitute's FAIL reads 'not reproduced with these substitutes'; a code check is counted apart and
    never among the paper's verdicts; each row shows its kind, its substitutions, its note and its floor;
    the section opens with what the rebuild is; an INCONCLUSIVE row says what would decide it."""
    from repro.aereport import kind_counts

    doc = {**SUBSTITUTED, "rebuild": "Scripted agents stand in for frontier models.",
           "claims": [
               {**CLAIMS["claims"][0], "kind": "code_check", "kind_reason": "holds by construction of the testbed"},
               {**CLAIMS["claims"][1], "note": "our reading of 'low'"},
               {**CLAIMS["claims"][2], "floor": "a random verdict on the same units"},
               {**CLAIMS["claims"][4]},
               {**CLAIMS["claims"][5]}]}
    claims_dir = tmp_path / "claims"
    claims_dir.mkdir()
    _write(claims_dir, doc)
    metrics = _metrics(np.random.default_rng(2))
    ids = [f"s{i}" for i in range(10)]
    x = np.random.default_rng(3).normal(0, 1, 10)
    metrics["s"] = sample(0.5 + (x - x.mean()) / x.std(ddof=1), ids, "seed")  # an effect of 0.5 sd: open at 10 units
    write_json(tmp_path / "results/demo/metrics.json", metrics)
    bench = tmp_path / "benchmarks/demo/x.tsv"
    bench.parent.mkdir(parents=True)
    bench.write_text("s\th:m:s\tcpu_time\n10\t0:00:10\t3600\n")
    entries = collect([{"number": 20, "key": "demo", "title": "Demo"}], built={"demo": []}, claims_dir=claims_dir,
                      schema_path=SCHEMA, results_dir=tmp_path / "results", benchmarks_dir=tmp_path / "benchmarks")
    counts = kind_counts(entries[0].results)
    assert counts["code_check"]["PASS"] == 1 and counts["substitute"]["PASS"] == 1 and counts["substitute"]["FAIL"] == 1
    assert sum(counts["reproduction"].values()) == 0 and counts["NOT RUN"] == 1
    md = render_markdown(entries, scale="smoke")
    assert ("Reproduction verdicts (the paper's experiment, scaled down): none. Substitute verdicts (named "
            "substitutions; a FAIL is not reproduced with these substitutes): 1 PASS, 1 FAIL, 1 INCONCLUSIVE. Code "
            "checks (our testbed and code, never counted as the papers' verdicts): 1 PASS. NOT RUN: 1.") in md
    assert "| 20 | demo: Demo | yes | 5 | none | 1 PASS, 1 FAIL, 1 INCONCLUSIVE | 1 PASS | 1 |" in md
    section = md.split("## 20. demo")[1]
    assert section.index("What this rebuild is: Scripted agents stand in for frontier models.") < section.index("| claim |")
    rows = {line.split("`")[1]: line for line in section.splitlines() if line.startswith("| `")}
    assert rows["above"].endswith("**PASS** (code check) |") and "code check (holds by construction of the testbed)" in rows["above"]
    assert rows["below"].endswith("**FAIL** (not reproduced with these substitutes) |")
    assert "Note: our reading of 'low'" in rows["below"] and "substitute: a 135M model (in place of a 49B model)" in rows["below"]
    assert "Floor: a random verdict on the same units." in rows["beats"]
    assert "**INCONCLUSIVE** |" in rows["summary"] and "to decide: would decide (PASS side) at about n = " in rows["summary"]
    assert "CPU-h for the preset's build at that many units (now 1 CPU-h" in rows["summary"]
    page = render_html(entries, scale="smoke")
    assert "<b>FAIL</b> (not reproduced with these substitutes)" in page and "<li>a 135M model <i>in place of</i> a 49B model</li>" in page
    assert "code checks" in page and "What this rebuild is: Scripted agents stand in for frontier models." in page

    from repro.claims import main
    (tmp_path / "workflow/claims").mkdir(parents=True)
    (tmp_path / "workflow/schemas").mkdir()
    (tmp_path / "workflow/schemas/claims.schema.yaml").write_text(SCHEMA.read_text())
    _write(tmp_path / "workflow/claims", doc)
    assert main(["demo", "--repo", str(tmp_path), "--results", str(tmp_path / "results")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("demo.above: PASS  (code_check)") and out[1].startswith("demo.below: FAIL  (substitute)")
    assert "to decide: would decide" in out[4]
