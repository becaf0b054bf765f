"""source: remote: a release in the published layout recomputes the same tables without a model call."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from repro.papers.driftbench.agents import AgentProfile, ScriptedAgent
from repro.papers.driftbench.briefs import load_briefs
from repro.papers.driftbench.experiment import aggregate, judge_runs, read_release, write_release
from repro.papers.driftbench.harness import CONDITIONS, Generation, run_condition

BRIEFS = load_briefs()[:4]


def release_runs():
    agent = ScriptedAgent(BRIEFS, AgentProfile(break_pressure=0.4, recall=0.9, add_pressure=0.2), name="m1")
    runs = [t for c in CONDITIONS for t in run_condition(agent, BRIEFS, c, repetitions=2, seed=1, gen=Generation(),
                                                          model_id="m1")]
    return runs, judge_runs(runs, {b.id: b for b in BRIEFS}, {"kind": "rules"})


def write_fixture(folder):
    """A small release written by this project (the published one is not reachable from here)."""
    runs, scores = release_runs()
    _, _, _, table = aggregate(runs, scores, BRIEFS, ["m1"])
    summary = table.rename(columns={"model": "model_id", "kbv": "kbv_rate"})[["condition", "model_id", "kbv_rate"]]
    write_release(folder, BRIEFS, runs, scores, summary.dropna())
    return runs, scores


def test_release_recomputes_the_same_tables_and_matches_its_summary(tmp_path):
    runs, scores = write_fixture(tmp_path)
    briefs, t2, s2, published = read_release(tmp_path)
    assert [b.id for b in briefs] == sorted(b.id for b in BRIEFS)
    m1, r1, _, tab1 = aggregate(runs, scores, BRIEFS, ["m1"])
    m2, r2, _, tab2 = aggregate(t2, s2, briefs, ["m1"], published)
    pd.testing.assert_frame_equal(r1.sort_values("run_id").reset_index(drop=True),
                                  r2.sort_values("run_id").reset_index(drop=True))
    assert m2["published_max_abs_diff"] == 0.0
    assert m1["kbv"] == m2["kbv"]


def test_a_release_without_checks_still_gives_kbv_from_the_judge(tmp_path):
    """Released briefs carry no machine checks: the checker is silent, the judge-based KBV remains."""
    write_fixture(tmp_path)
    for f in (tmp_path / "briefs").glob("*.yaml"):
        f.write_text(_strip_checks(f.read_text()))
    briefs, t, s, _ = read_release(tmp_path)
    assert all(not b.checks for b in briefs)
    metrics, runs, _, _ = aggregate(t, s, briefs, ["m1"])
    assert runs.adherence.isna().all() and runs.kbv.notna().any()


def _strip_checks(text: str) -> str:
    import yaml

    doc = yaml.safe_load(text)
    doc.pop("checks", None)
    return yaml.safe_dump(doc, sort_keys=False)


@pytest.mark.parametrize("damage, message", [
    (lambda d: (d / "scores").rename(d / "points"), "folder scores/ does not exist"),
    (lambda d: next((d / "transcripts").glob("*.jsonl")).write_text("{not json\n"), "line 1 is not JSON"),
    (lambda d: _drop_meta(next((d / "transcripts").glob("*.jsonl"))), "metadata lacks condition"),
    (lambda d: (d / "kbv_summary.csv").write_text("condition,model\nx,y\n"), "missing column"),
])
def test_a_damaged_release_is_refused_naming_the_file_or_column(tmp_path, damage, message):
    write_fixture(tmp_path)
    damage(tmp_path)
    with pytest.raises(ValueError, match=message):
        briefs, t, s, pub = read_release(tmp_path)
        aggregate(t, s, briefs, ["m1"], pub)


def _drop_meta(path):
    t = json.loads(path.read_text())
    del t["metadata"]["condition"]
    path.write_text(json.dumps(t) + "\n")
