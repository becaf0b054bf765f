"""The harness against scripted agents: turn structure, probes kept out of the history, paired seeds,
and the planted violations, recall and KBV recovered exactly."""

from __future__ import annotations

import numpy as np
import pytest

from repro.llm.base import LanguageModel
from repro.papers.driftbench.agents import AgentProfile, ScriptedAgent, planted_recall, planted_violations
from repro.papers.driftbench.briefs import load_briefs
from repro.papers.driftbench.experiment import judge_runs, run_table, summarise
from repro.papers.driftbench.harness import (CONDITIONS, PROBE, Generation, final_proposal, probe_replies,
                                             run_condition, turn_plan)
from repro.papers.driftbench.scoring import KNOWS_THRESHOLD, adherence_scale, check_proposal

BRIEFS = load_briefs()
BY_ID = {b.id: b for b in BRIEFS}
DRIFTER = AgentProfile(break_initial=0.1, break_neutral=0.05, break_pressure=0.3, repair_checkpoint=0.5,
                       add_pressure=0.3, pad_pressure=2, recall=0.9, recall_decay=0.02)


def _play(profile, name="agent", reps=2, seed=3):
    agent = ScriptedAgent(BRIEFS, profile, name=name)
    return [t for c in CONDITIONS for t in run_condition(agent, BRIEFS, c, repetitions=reps, seed=seed,
                                                          gen=Generation(), model_id=name)]


class Recorder(LanguageModel):
    """Records every conversation and seed it is asked to continue; answers with the call number."""

    name = "recorder"

    def __init__(self):
        self.calls = []

    def generate(self, prompts, **kw):
        raise NotImplementedError

    def logprobs(self, prompts, continuations, **kw):
        raise NotImplementedError

    def chat(self, messages, *, seed=0, temperature=0.0, **kw):
        self.calls.append({"convs": [list(c) for c in messages], "seed": seed, "temperature": temperature})
        return [f"reply {len(self.calls)}" for _ in messages]


@pytest.mark.parametrize("condition, turns, probes", [("single_shot", 1, 0), ("multi_turn_neutral", 6, 5),
                                                      ("multi_turn_pressure", 6, 5), ("checkpointed_pressure", 8, 5)])
def test_turn_plan_matches_the_reference(condition, turns, probes):
    plan = turn_plan(condition)
    assert len(plan) == turns and sum(p for _, p in plan) == probes
    assert not plan[-1][1] and not any(p for k, p in plan if k == "checkpoint")


def test_probes_never_enter_the_history_and_run_at_temperature_zero():
    lm = Recorder()
    runs = run_condition(lm, BRIEFS[:2], "checkpointed_pressure", repetitions=1, seed=1, gen=Generation(temperature=0.9),
                         model_id="rec")
    turn_calls = [c for c in lm.calls if c["convs"][0][-1]["content"] != PROBE]
    probe_calls = [c for c in lm.calls if c["convs"][0][-1]["content"] == PROBE]
    assert len(turn_calls) == 8 and len(probe_calls) == 5
    assert all(c["temperature"] == 0.9 for c in turn_calls) and all(c["temperature"] == 0.0 for c in probe_calls)
    for call in turn_calls:
        assert all(m["content"] != PROBE for m in call["convs"][0])
    # the transcript stores the probes, flagged, in order; the turn index counts the user turns before a
    # probe, so probes after turns 0, 1, 3, 4, 6 read 1, 2, 4, 5, 7
    assert [t for t, _ in probe_replies(runs[0]["messages"])] == [1, 2, 4, 5, 7]


def test_checkpoints_sit_where_the_reference_inserts_them():
    """Worked by hand from the reference's get_turn_prompts("checkpointed_pressure"): the six-turn pressure
    list [initial, P1, P2, P3, P4, final] with a checkpoint appended after items 2 and 4 gives
    [initial, P1, CHECKPOINT, P2, P3, CHECKPOINT, P4, final]; get_checkpoint_indices says {2, 5}; the
    probe follows every turn but those and the last, i.e. turns 0, 1, 3, 4, 6."""
    plan = turn_plan("checkpointed_pressure")
    kinds = [k for k, _ in plan]
    assert kinds == ["initial", "pressure0", "checkpoint", "pressure1", "pressure2", "checkpoint", "pressure3",
                     "final"]
    assert {i for i, k in enumerate(kinds) if k == "checkpoint"} == {2, 5}
    assert [i for i, (_, probe) in enumerate(plan) if probe] == [0, 1, 3, 4, 6]
    # a pressure turn follows the last checkpoint, and the pressure prompts keep their order
    assert kinds[6].startswith("pressure") and [k for k in kinds if k.startswith("pressure")] == \
        [k for k, _ in turn_plan("multi_turn_pressure") if k.startswith("pressure")]


def test_conditions_share_the_seed_of_each_turn():
    seeds = {}
    for cond in ("multi_turn_neutral", "multi_turn_pressure"):
        lm = Recorder()
        run_condition(lm, BRIEFS[:2], cond, repetitions=2, seed=7, gen=Generation(), model_id="rec")
        seeds[cond] = [c["seed"] for c in lm.calls]
    assert seeds["multi_turn_neutral"] == seeds["multi_turn_pressure"]
    assert len(set(seeds["multi_turn_neutral"])) == len(seeds["multi_turn_neutral"])  # each call its own stream


def test_checker_finds_exactly_the_planted_violations_and_the_probe_the_planted_recall():
    runs = _play(DRIFTER)
    n_violations = 0
    for t in runs:
        brief = BY_ID[t["metadata"]["brief_id"]]
        final = final_proposal(t["messages"])
        found = {k for k, v in check_proposal(final, brief).items() if v}
        assert found == planted_violations(final, brief), t["metadata"]["run_id"]
        n_violations += len(found)
        for _, reply in probe_replies(t["messages"]):
            from repro.papers.driftbench.scoring import probe_recall

            assert probe_recall(reply, brief.hard_constraints) == planted_recall(reply, brief)
    assert n_violations > 50  # the drifter does violate: the comparison is not vacuous


def test_harness_recovers_the_planted_kbv_rate():
    runs = _play(DRIFTER)
    scores = judge_runs(runs, BY_ID, {"kind": "rules"})
    table = run_table(runs, scores, BY_ID)
    planted = {}
    for t in runs:
        brief = BY_ID[t["metadata"]["brief_id"]]
        probes = probe_replies(t["messages"])
        if not probes:
            continue
        recall = np.mean(planted_recall(probes[-1][1], brief))
        n_c = sum(k.startswith("c") for k in planted_violations(final_proposal(t["messages"]), brief))
        planted[t["metadata"]["run_id"]] = bool(recall >= KNOWS_THRESHOLD and adherence_scale(n_c) < 3)
    got = table.dropna(subset=["kbv_checker"]).set_index("run_id").kbv_checker.astype(bool).to_dict()
    assert got == planted
    assert 0 < np.mean(list(planted.values())) < 1


def test_pressure_effects_of_the_drifter_and_nulls_of_the_reference_agents():
    """Planted direction: the drifter breaks more under pressure, checkpoints repair; a faithful agent
    never violates (KBV 0); an agent that forgets (recall 0) violates without KBV. The repair is read on
    the checker's violations: with the reference's order a pressure turn follows the last checkpoint and
    both pressure conditions end with most runs below adherence 3, so the KBV rate is set by recall."""
    runs = _play(DRIFTER, "drifter") + _play(AgentProfile(recall=1.0), "faithful") + \
        _play(AgentProfile(break_pressure=0.5, break_neutral=0.2, recall=0.0), "forgetful")
    table = run_table(runs, judge_runs(runs, BY_ID, {"kind": "rules"}), BY_ID)
    mean = table.groupby(["model", "condition"]).mean(numeric_only=True)
    assert mean.loc[("drifter", "multi_turn_pressure"), "adherence"] < mean.loc[("drifter", "multi_turn_neutral"), "adherence"]
    assert mean.loc[("drifter", "multi_turn_pressure"), "log_tokens"] > mean.loc[("drifter", "multi_turn_neutral"), "log_tokens"]
    assert mean.loc[("drifter", "checkpointed_pressure"), "n_violated"] < mean.loc[("drifter", "multi_turn_pressure"), "n_violated"]
    assert (table[table.model == "faithful"].adherence == 4).all()
    assert (table[table.model == "faithful"].kbv.dropna() == False).all()  # noqa: E712 - elementwise on a Series
    forgetful = table[table.model == "forgetful"]
    assert forgetful.n_violated.sum() > 0 and (forgetful.kbv_checker.dropna() == False).all()  # noqa: E712
    metrics, kbv_table = summarise(table, ["drifter"])
    assert set(metrics["kbv"]["multi_turn_pressure"]) == {"drifter"}
    # every condition's sample names the same units: paired comparisons
    ids = {c: tuple(metrics["adherence"][c]["drifter"]["ids"]) for c in CONDITIONS}
    assert len(set(ids.values())) == 1


def test_same_seed_same_transcripts():
    assert _play(DRIFTER, seed=5, reps=1) == _play(DRIFTER, seed=5, reps=1)
    assert _play(DRIFTER, seed=5, reps=1) != _play(DRIFTER, seed=6, reps=1)


class Grader(LanguageModel):
    """A judge model that answers every criterion with a fixed verdict (and once with nothing)."""

    name = "grader"

    def __init__(self, verdict):
        self.verdict = verdict
        self.prompts = []

    def generate(self, prompts, **kw):
        raise NotImplementedError

    def logprobs(self, prompts, continuations, **kw):
        raise NotImplementedError

    def chat(self, messages, **kw):
        self.prompts += [c[-1]["content"] for c in messages]
        if self.verdict is None:
            return ["I cannot grade this." for _ in messages]
        return ["\n".join(f"{n}: {self.verdict}" for n in ("c0", "c1", "c2", "c3", "c4", "c5", "c6", "b0", "b1", "b2"))
                for _ in messages]


@pytest.mark.parametrize("verdict, adherence, missed_all", [("yes", 4.0, True), ("no", 0.0, False)])
def test_a_model_judge_goes_through_repro_llm_and_its_misses_are_counted(verdict, adherence, missed_all):
    runs = _play(DRIFTER, reps=1)
    grader = Grader(verdict)
    scores = judge_runs(runs, BY_ID, {"kind": "model", "llm": {}}, model=grader)
    assert all(s["j_constraint_adherence"] == adherence for s in scores)
    # the judge reads the transcript without probes
    assert all(PROBE not in p for p in grader.prompts)
    table = run_table(runs, scores, BY_ID)
    assert (table.judge_missed == table.checker_violations).all() == missed_all
    assert table.checker_violations.sum() > 0


def test_a_judge_that_decides_nothing_leaves_the_run_unscored():
    runs = _play(DRIFTER, reps=1)[:3]
    scores = judge_runs(runs, BY_ID, {"kind": "model", "llm": {}}, model=Grader(None))
    assert all(np.isnan(s["j_constraint_adherence"]) and not s["judge_parsed"] for s in scores)
