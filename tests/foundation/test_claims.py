"""Claims: checks against hand-written metrics, schema errors, and the AE report over 19 papers."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import yaml

from repro.aereport import collect, load_papers, render_html, render_markdown
from repro.claims import FAIL, INCONCLUSIVE, NOT_RUN, PASS, evaluate, interval, load_claims, rate, sample
from repro.io import write_json

REPO = Path(__file__).resolve().parents[2]
SCHEMA = REPO / "workflow/schemas/claims.schema.yaml"

CLAIMS = {
    "paper": "demo",
    "title": "Demo paper",
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
    papers = {p["key"] for p in load_papers(REPO / "workflow/papers.yaml")}
    for path in sorted((REPO / "workflow/claims").glob("*.yaml")):
        assert path.stem in papers, f"{path.name} names no paper of workflow/papers.yaml"
        assert load_claims(path, SCHEMA), path


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
    assert "5 PASS, 2 FAIL, 1 INCONCLUSIVE, 1 NOT RUN" in md
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
    assert "5 PASS, 2 FAIL, 1 INCONCLUSIVE, 1 NOT RUN" in md  # the diagnostics count as no verdict
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
