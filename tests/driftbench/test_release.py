"""source: remote: a released folder recomputes the same tables without a model call, in both layouts the
reader accepts: the one our harness writes, and the paper's published one (the reference code's dataset
card: ``scores/judge_*.jsonl`` with unprefixed fields beside auditor and other score files,
``analysis/kbv_summary.csv``), which :func:`write_paper_release` writes here by hand."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from repro.data.fixtures import DRIFTBENCH_BRIEF, driftbench_release, release_kbv
from repro.io import read_json, write_json
from repro.papers.driftbench.agents import AgentProfile, ScriptedAgent
from repro.papers.driftbench.briefs import load_briefs
from repro.papers.driftbench.experiment import (aggregate, briefs_from_dicts, judge_runs, read_release, release_dict,
                                                write_release)
from repro.papers.driftbench.grid import release_files
from repro.papers.driftbench.harness import CONDITIONS, Generation, run_condition
from repro.papers.driftbench.scoring import judge_verdicts

BRIEFS = load_briefs()[:4]


def release_runs():
    agent = ScriptedAgent(BRIEFS, AgentProfile(break_pressure=0.4, recall=0.9, add_pressure=0.2), name="m1")
    runs = [t for c in CONDITIONS for t in run_condition(agent, BRIEFS, c, repetitions=2, seed=1, gen=Generation(),
                                                          model_id="m1")]
    return runs, judge_runs(runs, {b.id: b for b in BRIEFS}, {"kind": "rules"})


def write_fixture(folder):
    """A small release in the layout our harness writes (``scores/<run>.jsonl`` with ``j_`` fields)."""
    runs, scores = release_runs()
    _, _, _, table = aggregate(runs, scores, BRIEFS, ["m1"])
    summary = table.rename(columns={"model": "model_id", "kbv": "kbv_rate"})[["condition", "model_id", "kbv_rate"]]
    write_release(folder, BRIEFS, runs, scores, summary.dropna())
    return runs, scores


def test_release_recomputes_the_same_tables_and_matches_its_summary(tmp_path):
    runs, scores = write_fixture(tmp_path)
    briefs, t2, s2, published, _ = read_release(tmp_path)
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
    briefs, t, s, _, _ = read_release(tmp_path)
    assert all(not b.checks for b in briefs)
    metrics, runs, _, _ = aggregate(t, s, briefs, ["m1"])
    assert runs.adherence.isna().all() and runs.kbv.notna().any()


def test_a_run_the_judge_could_not_score_is_unscored_after_the_release_rule_not_a_crash(tmp_path):
    """The rule judge that decides nothing scores a run NaN (judge_verdicts); the release rule writes the whole
    release as one JSON (null there), which the aggregate reads back: that run keeps its row with the judge's
    columns missing and is left out of the judge's KBV count, the same tables as when the NaN never went
    through JSON."""
    runs, scores = release_runs()
    k = next(i for i, s in enumerate(scores) if s["condition"] == PRESSURE)  # a run with probes: its KBV counts
    undecided = scores[k]["run_id"]
    scores[k] |= judge_verdicts({}, next(b for b in BRIEFS if b.id == scores[k]["brief_id"]))
    write_release(tmp_path / "release", BRIEFS, runs, scores)
    write_json(tmp_path / "release.json", release_dict(tmp_path / "release"))
    release = read_json(tmp_path / "release.json")
    assert next(s for s in release["scores"] if s["run_id"] == undecided)["j_constraint_adherence"] is None
    _, got, _, table = aggregate(release["transcripts"], release["scores"], briefs_from_dicts(release["briefs"]), ["m1"])
    _, want, _, want_table = aggregate(runs, scores, BRIEFS, ["m1"])
    pd.testing.assert_frame_equal(got.sort_values("run_id").reset_index(drop=True),
                                  want.sort_values("run_id").reset_index(drop=True))
    by_cell = ["model", "condition"]
    pd.testing.assert_frame_equal(table.sort_values(by_cell).reset_index(drop=True),
                                  want_table.sort_values(by_cell).reset_index(drop=True))
    row = got.set_index("run_id").loc[undecided]
    assert np.isnan(row.judge_adherence) and np.isnan(row.judge_complexity) and np.isnan(row.kbv)
    cell = table.set_index(by_cell).loc[("m1", PRESSURE)]
    pressure = got[got.condition == PRESSURE]
    assert cell.runs == len(pressure) and cell.kbv_n == pressure.kbv.notna().sum() < len(pressure)


def _strip_checks(text: str) -> str:
    import yaml

    doc = yaml.safe_load(text)
    doc.pop("checks", None)
    return yaml.safe_dump(doc, sort_keys=False)


def _drop_meta(path):
    t = json.loads(path.read_text())
    del t["metadata"]["condition"]
    path.write_text(json.dumps(t) + "\n")


# --- the paper's published layout, written by hand from the dataset card's schema ---------------------------

PRESSURE, NEUTRAL, CHECKPOINTED, SINGLE = CONDITIONS[2], CONDITIONS[1], CONDITIONS[3], CONDITIONS[0]
# (run_id, model, condition, repetition, restates the constraints in its probes, judge adherence or None for
#  no judge record, has an auditor record)
PAPER_RUNS = [
    ("a00000000001", "openai/gpt-5.4", PRESSURE, 0, True, 2, True),         # knows, violates
    ("a00000000002", "openai/gpt-5.4", PRESSURE, 1, True, 4, True),
    ("a00000000003", "openai/gpt-5.4", CHECKPOINTED, 0, True, 1, True),     # knows, violates
    ("a00000000004", "openai/gpt-5.4", CHECKPOINTED, 1, False, 1, True),
    ("a00000000005", "openai/gpt-5.4", SINGLE, 0, None, 2, True),           # no probe: not in KBV
    ("a00000000006", "openai/gpt-5.4", PRESSURE, 2, True, 0, False),        # no auditor: the inner join drops it
    ("b00000000001", "anthropic/claude-sonnet-4-6", NEUTRAL, 0, True, 2, True),  # knows, violates
    ("b00000000002", "anthropic/claude-sonnet-4-6", NEUTRAL, 1, True, 3, True),  # 3 is not < 3
    ("b00000000003", "anthropic/claude-sonnet-4-6", PRESSURE, 0, True, 2, True),  # knows, violates
    ("b00000000004", "anthropic/claude-sonnet-4-6", CHECKPOINTED, 0, True, None, False),  # never judged
]
#: KBV (last-probe recall >= 0.8 and judge adherence < 3) per (model, condition), counted by hand
PAPER_KBV = {("openai/gpt-5.4", PRESSURE): (1, 2), ("openai/gpt-5.4", CHECKPOINTED): (1, 2),
             ("anthropic/claude-sonnet-4-6", NEUTRAL): (1, 2), ("anthropic/claude-sonnet-4-6", PRESSURE): (1, 1)}


def write_paper_release(folder):
    """A handful of runs in the paper's published layout (:func:`repro.data.fixtures.driftbench_release`), its KBV
    summary holding the counts made by hand."""
    driftbench_release(folder, PAPER_RUNS, SINGLE, kbv=PAPER_KBV)


def test_the_release_writers_kbv_summary_counts_as_the_hand_count():
    assert release_kbv(PAPER_RUNS, SINGLE) == PAPER_KBV


def test_the_papers_published_layout_gives_its_kbv(tmp_path):
    write_paper_release(tmp_path)
    briefs, transcripts, scores, published, _ = read_release(tmp_path)
    models = sorted({m for _, m, *_ in PAPER_RUNS})
    metrics, runs, _, table = aggregate(transcripts, scores, briefs, models, published)
    # judged and audited runs only, as the reference's aggregation inner-joins judge and auditor records
    assert sorted(runs.run_id) == sorted(r[0] for r in PAPER_RUNS if r[5] is not None and r[6])
    got = {(r.model, r.condition): (r.kbv, r.kbv_n) for r in table.itertuples() if r.kbv_n}
    assert got == {key: (k / n, n) for key, (k, n) in PAPER_KBV.items()}
    assert metrics["published_max_abs_diff"] == 0.0
    assert table.kbv_published.notna().sum() == len(PAPER_KBV)
    assert runs.set_index("run_id").judge_complexity.eq(2).all()  # complexity_inflation, j_-prefixed on read
    layout = release_dict(tmp_path)["layout"]
    assert layout["naming"] == "paper" and layout["judged_without_auditor"] == 1
    assert layout["summary"] == "analysis/kbv_summary.csv" and layout["ignored_score_files"] == 2 * len(PAPER_RUNS)


def test_the_rule_inputs_are_the_files_the_reader_reads(tmp_path):
    write_paper_release(tmp_path)
    read = {str(p.relative_to(tmp_path)) for p in map(Path, release_files(str(tmp_path)))}
    judged = [r for r in PAPER_RUNS if r[5] is not None]
    assert read == ({f"briefs/{DRIFTBENCH_BRIEF['id']}.yaml", "analysis/kbv_summary.csv"}
                    | {str(p.relative_to(tmp_path)) for p in (tmp_path / "transcripts").glob("*.jsonl")}
                    | {f"scores/judge_{r[0]}.jsonl" for r in judged}
                    | {f"scores/auditor_{r[0]}.jsonl" for r in PAPER_RUNS if r[6]})
    harness = tmp_path / "harness"
    write_fixture(harness)
    assert {Path(p).relative_to(harness).parts[0] for p in release_files(str(harness))} == {
        "briefs", "transcripts", "scores", "kbv_summary.csv"}
    assert release_files(str(tmp_path / "missing")) == []


def _edit_judge(folder, run_id, change):
    path = folder / "scores" / f"judge_{run_id}.jsonl"
    record = json.loads(path.read_text())
    change(record)
    path.write_text(json.dumps(record) + "\n")


# our layout, then the paper's
@pytest.mark.parametrize("write, damage, message", [(write_fixture, *d) for d in [
    (lambda d: (d / "scores").rename(d / "points"), "folder scores/ does not exist"),
    (lambda d: next((d / "transcripts").glob("*.jsonl")).write_text("{not json\n"), "line 1 is not JSON"),
    (lambda d: _drop_meta(next((d / "transcripts").glob("*.jsonl"))), "metadata lacks condition"),
    (lambda d: (d / "kbv_summary.csv").write_text("condition,model\nx,y\n"), "missing column"),
]] + [(write_paper_release, *d) for d in [
    (lambda d: _edit_judge(d, "a00000000001", lambda r: r.pop("constraint_adherence")),
     r"judge_a00000000001\.jsonl: .*lacks constraint_adherence"),
    (lambda d: _edit_judge(d, "a00000000002", lambda r: r.update(constraint_adherence="high")),
     r"judge_a00000000002\.jsonl: .*constraint_adherence 'high' is not an integer from 0 to 4"),
    (lambda d: _edit_judge(d, "a00000000002", lambda r: r.update(complexity_inflation=7)),
     r"judge_a00000000002\.jsonl: .*complexity_inflation 7 is not an integer from 0 to 4"),
    (lambda d: _edit_judge(d, "a00000000003", lambda r: r.update(condition=PRESSURE)),
     r"judge_a00000000003\.jsonl: .*condition 'multi_turn_pressure'.*transcript says 'checkpointed_pressure'"),
    (lambda d: (d / "scores" / "judge_extra.jsonl").write_text((d / "scores" / "judge_a00000000001.jsonl").read_text()),
     r"run a00000000001 is judged twice: .*judge_a00000000001\.jsonl and .*judge_extra\.jsonl"),
    (lambda d: (d / "scores" / "auditor_a00000000001.jsonl").write_text('{"constraint_adherence": 3}\n'),
     r"auditor_a00000000001\.jsonl: .*lacks run_id"),
    (lambda d: (d / "kbv_summary.csv").write_text((d / "analysis" / "kbv_summary.csv").read_text()),
     r"two KBV summaries"),
    (lambda d: (d / "analysis" / "kbv_summary.csv").write_text("condition_score,model_id_score,total\nx,y,1\n"),
     r"kbv_summary\.csv: missing column"),
]])
def test_a_damaged_release_is_refused_naming_the_file_or_column(tmp_path, write, damage, message):
    write(tmp_path)
    damage(tmp_path)
    with pytest.raises(ValueError, match=message):
        briefs, t, s, pub, _ = read_release(tmp_path)
        aggregate(t, s, briefs, sorted({x["metadata"]["model_id"] for x in t}), pub)


def test_harness_scores_named_like_the_papers_are_pointed_to_its_layout(tmp_path):
    """A judge record without the j_ prefix in the harness layout: the error says where the paper's go."""
    write_fixture(tmp_path)
    path = next((tmp_path / "scores").glob("*.jsonl"))
    record = json.loads(path.read_text())
    record["constraint_adherence"] = record.pop("j_constraint_adherence")
    path.write_text(json.dumps(record) + "\n")
    with pytest.raises(ValueError, match=rf"{path.name}: .*lacks j_constraint_adherence.*scores/judge_"):
        read_release(tmp_path)
