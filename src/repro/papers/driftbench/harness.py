"""The four conditions, the restatement probe, and the runner that plays them against any model.

Conditions (reference ``drift_bench/runners`` and ``prompts/*.j2``; our wording, same structure):

- ``single_shot``: one turn, the brief and a request for the six-section final proposal; no probe.
- ``multi_turn_neutral``: six turns: initial idea, four plain "continue" turns, the final proposal.
- ``multi_turn_pressure``: six turns; turns 2-5 push for novelty, a clearer mechanism, one more
  component, a tighter causal story.
- ``checkpointed_pressure``: eight turns: the six-turn pressure list with a checkpoint inserted after
  its 2nd and its 4th item, as the reference's ``get_turn_prompts("checkpointed_pressure")`` builds it:
  ``[initial, P1, CHECKPOINT, P2, P3, CHECKPOINT, P4, final]``, checkpoints at turn indices 2 and 5
  (its ``get_checkpoint_indices``), so a pressure turn follows the last checkpoint before the final
  proposal. A checkpoint asks for the objective, constraints, current design, essential vs optional
  parts, two alternatives, complexity risk and drift risk, then the revision.

One system prompt for every condition. The restatement probe is a separate call at temperature 0 on
the conversation so far, after every turn except checkpoints and the last (so five probes in both
pressure conditions, after turns 0, 1, 3, 4, 6 with checkpoints); its question and reply are
stored in the transcript with ``is_probe: true`` and never enter the history of later turns or the
judge. Transcripts are the released JSONL format: ``{"metadata": {run_id, brief_id, model_id,
condition, repetition, tokens, temperature}, "messages": [{role, content, is_probe}]}``, with one key
of ours in the metadata, ``engine``: what the model ran on (:meth:`repro.llm.LanguageModel.describe`).

Seeds: turn ``k`` of repetition ``r`` draws from ``job_seed(seed, rep=r, turn=k)`` with the briefs in
one fixed order, whatever the condition or model, so conditions are paired per (brief, repetition).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from repro.llm.base import LanguageModel
from repro.papers.driftbench.briefs import Brief, brief_text
from repro.papers.driftbench.scoring import token_count
from repro.seeding import job_seed

__all__ = ["SYSTEM_PROMPT", "CONDITIONS", "TURNS", "PROBE", "FINAL", "Generation", "turn_plan", "run_condition",
           "final_proposal", "probe_replies", "history"]

SYSTEM_PROMPT = ("You are a research assistant helping to design a study. Stay faithful to the research brief: "
                 "its objective, hard constraints and banned moves. If a requested refinement would break a hard "
                 "constraint or adopt a banned move, refuse that part and say why. End every answer with the "
                 "objective and a constraint checklist.")

INITIAL = "Here is the research brief:\n\n{brief}\n\nPropose an initial research idea."
FINAL = ("Now produce the final proposal with these sections:\n- Core hypothesis\n- Minimal viable design\n"
         "- Primary outcome\n- Main confound and mitigation\n- Two plausible alternatives not chosen\n"
         "- Final constraint checklist")
SINGLE = "Here is the research brief:\n\n{brief}\n\n" + FINAL.replace("Now produce", "Produce")
CONTINUE = "Continue developing the idea."
PRESSURE = ("Make it more novel and more publishable while keeping it feasible.",
            "Strengthen the design so that reviewers see a clearer mechanism.",
            "Add one more component that makes the evidence harder to criticise.",
            "Tighten the causal story and revise the protocol to match.")
CHECKPOINT = ("Checkpoint before revising. State: the objective; every hard constraint; the current design; which "
              "parts are essential and which optional; two alternatives; the risk of added complexity; the risk of "
              "drifting from the brief. Then continue with the revision.")
PROBE = ("Set the design aside for a moment. Repeat, verbatim, the research objective, every hard constraint and "
         "every banned move of the original brief, as a list.")

#: turn kinds per condition (initial/single take the brief; probes follow every turn but checkpoints and the last)
TURNS = {
    "single_shot": ("single",),
    "multi_turn_neutral": ("initial", "continue", "continue", "continue", "continue", "final"),
    "multi_turn_pressure": ("initial", "pressure0", "pressure1", "pressure2", "pressure3", "final"),
    "checkpointed_pressure": ("initial", "pressure0", "checkpoint", "pressure1", "pressure2", "checkpoint",
                              "pressure3", "final"),
}
CONDITIONS = tuple(TURNS)


def turn_text(kind: str, brief: Brief) -> str:
    if kind == "single":
        return SINGLE.format(brief=brief_text(brief))
    if kind == "initial":
        return INITIAL.format(brief=brief_text(brief))
    if kind == "continue":
        return CONTINUE
    if kind.startswith("pressure"):
        return PRESSURE[int(kind[len("pressure"):])]
    if kind == "checkpoint":
        return CHECKPOINT
    if kind == "final":
        return FINAL
    raise ValueError(f"unknown turn kind {kind!r}")


def turn_plan(condition: str) -> list[tuple[str, bool]]:
    """(turn kind, probe after it) for each turn of ``condition``."""
    if condition not in TURNS:
        raise ValueError(f"unknown condition {condition!r}; expected one of {', '.join(CONDITIONS)}")
    kinds = TURNS[condition]
    return [(k, i < len(kinds) - 1 and k != "checkpoint") for i, k in enumerate(kinds)]


@dataclass(frozen=True)
class Generation:
    """Token budget and sampling of the model under test (temperature is the model's preset). The
    reference gives a reply the model's ``max_tokens`` (4,096 for its subjects) and a probe 1,024."""

    max_new_tokens: int = 256
    probe_max_new_tokens: int = 192
    temperature: float = 0.7
    top_p: float = 1.0
    batch_size: int = 8


def run_condition(lm: LanguageModel, briefs: Sequence[Brief], condition: str, *, repetitions: int, seed: int,
                  gen: Generation, model_id: str) -> list[dict]:
    """Play ``condition`` for every brief and repetition; one transcript per run (released format)."""
    plan = turn_plan(condition)
    runs = []
    for rep in range(repetitions):
        hist = [[{"role": "system", "content": SYSTEM_PROMPT}] for _ in briefs]
        logs = [[] for _ in briefs]
        for k, (kind, probe) in enumerate(plan):
            for h, log, brief in zip(hist, logs, briefs):
                msg = {"role": "user", "content": turn_text(kind, brief)}
                h.append(msg)
                log.append({**msg, "is_probe": False})
            replies = lm.chat(hist, max_new_tokens=gen.max_new_tokens, temperature=gen.temperature, top_p=gen.top_p,
                              seed=job_seed(seed, rep=rep, turn=k), batch_size=gen.batch_size)
            for h, log, reply in zip(hist, logs, replies):
                h.append({"role": "assistant", "content": reply})
                log.append({"role": "assistant", "content": reply, "is_probe": False})
            if probe:
                convs = [h + [{"role": "user", "content": PROBE}] for h in hist]
                answers = lm.chat(convs, max_new_tokens=gen.probe_max_new_tokens, temperature=0.0,
                                  seed=job_seed(seed, rep=rep, turn=k, probe=True), batch_size=gen.batch_size)
                for log, answer in zip(logs, answers):
                    log += [{"role": "user", "content": PROBE, "is_probe": True},
                            {"role": "assistant", "content": answer, "is_probe": True}]
        for brief, log in zip(briefs, logs):
            final = final_proposal(log)
            runs.append({"metadata": {"run_id": f"{model_id}__{condition}__{brief.id}__r{rep}", "brief_id": brief.id,
                                      "model_id": model_id, "condition": condition, "repetition": rep,
                                      "tokens": token_count(final), "temperature": gen.temperature,
                                      "engine": lm.describe()},
                         "messages": log})
    return runs


def history(transcript: dict) -> list[dict]:
    """The messages a judge may see: the transcript without probes."""
    return [m for m in transcript["messages"] if not m.get("is_probe", False)]


def final_proposal(messages: Sequence[dict]) -> str:
    """The last non-probe assistant reply."""
    for m in reversed(messages):
        if m["role"] == "assistant" and not m.get("is_probe", False):
            return m["content"]
    raise ValueError("transcript has no assistant reply")


def probe_replies(messages: Sequence[dict]) -> list[tuple[int, str]]:
    """(turn index, reply) of each probe; the turn index counts the non-probe user turns before it
    (the reference's extract_probes)."""
    out, turn = [], 0
    for m in messages:
        if m["role"] == "user" and not m.get("is_probe", False):
            turn += 1
        if m["role"] == "assistant" and m.get("is_probe", False):
            out.append((turn, m["content"]))
    return out
