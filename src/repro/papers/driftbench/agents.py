"""Scripted agents: deterministic "models" whose violations and recall are planted, so that the
harness, the checker, the probe scoring and the KBV rate can be tested against known truth.

A :class:`ScriptedAgent` speaks the :class:`repro.llm.base.LanguageModel` chat interface and is
stateless: it reads the brief from the first user message and its current design from its own last
reply (probes never enter the history), then applies the turn it is given:

- the initial (or single-shot) turn breaks each machine-checkable hard constraint with probability
  ``break_initial``; a plain "continue" turn with ``break_neutral``; a pressure turn with
  ``break_pressure``, adopts each banned move with ``add_pressure`` and adds ``pad_pressure``
  filler components (complexity inflation); a checkpoint repairs each broken constraint with
  ``repair_checkpoint``;
- every reply is the whole proposal: one sentence per check (its ``comply`` or ``violate`` sentence),
  the banned moves taken, the filler, then a constraint checklist that ticks every constraint (the
  agent claims adherence whatever it did);
- a probe reply restates the objective, each hard constraint verbatim with probability
  ``recall - recall_decay * turns so far``, and the banned moves.

Draws come from ``job_seed(seed, i)`` for conversation ``i`` of a call, like the local backend's
sampling streams. :func:`planted_violations` and :func:`planted_recall` read the truth back from the
agent's own sentences (exact strings), independently of the checker's regular expressions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from repro.llm.base import LanguageModel, UnsupportedOperation, as_conversations
from repro.papers.driftbench.briefs import Brief
from repro.papers.driftbench.harness import CHECKPOINT, CONTINUE, FINAL, PRESSURE, PROBE
from repro.seeding import job_seed, make_rng

__all__ = ["AgentProfile", "ScriptedAgent", "planted_violations", "planted_recall", "FILLER"]

FILLER = "Extension {n}: a further robustness analysis of the primary outcome."


@dataclass(frozen=True)
class AgentProfile:
    break_initial: float = 0.0
    break_neutral: float = 0.0
    break_pressure: float = 0.0
    repair_checkpoint: float = 0.0
    add_pressure: float = 0.0
    pad_pressure: int = 0
    recall: float = 1.0
    recall_decay: float = 0.0

    def __post_init__(self) -> None:
        for name in ("break_initial", "break_neutral", "break_pressure", "repair_checkpoint", "add_pressure", "recall",
                     "recall_decay"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"agent profile: {name} must be in [0, 1], got {getattr(self, name)}")
        if self.pad_pressure < 0:
            raise ValueError(f"agent profile: pad_pressure must be >= 0, got {self.pad_pressure}")


def planted_violations(reply: str, brief: Brief) -> set[str]:
    """Targets (``c<i>``, ``b<j>``) whose violating sentence the agent wrote in ``reply``."""
    return {c.target for c in brief.checks if c.sentence(comply=False) in reply}


def planted_recall(reply: str, brief: Brief) -> list[bool]:
    """Per hard constraint: did the agent restate it (its own list line) in the probe ``reply``."""
    return [f"\n- {c}\n" in f"\n{reply}\n" for c in brief.hard_constraints]


class ScriptedAgent(LanguageModel):
    """A deterministic agent with a planted profile (see the module docstring)."""

    def __init__(self, briefs: Sequence[Brief], profile: AgentProfile, name: str = "scripted") -> None:
        self.briefs = {b.objective: b for b in briefs}
        self.profile = profile
        self.name = name

    def describe(self) -> dict:
        return {"backend": "scripted", "model": self.name}

    def generate(self, prompts, **kwargs):
        raise UnsupportedOperation(f"{self.name}: a scripted agent only chats")

    def logprobs(self, prompts, continuations, **kwargs):
        raise UnsupportedOperation(f"{self.name}: a scripted agent has no token probabilities")

    def chat(self, messages, *, seed: int = 0, **kwargs):
        convs, single = as_conversations(messages)
        replies = [self._reply(conv, make_rng(job_seed(seed, i))) for i, conv in enumerate(convs)]
        return replies[0] if single else replies

    def _brief(self, conv) -> Brief:
        first = next(m["content"] for m in conv if m["role"] == "user")
        for objective, brief in self.briefs.items():
            if f"Objective: {objective}" in first:
                return brief
        raise ValueError(f"{self.name}: the conversation's brief is not one of the agent's briefs")

    def _reply(self, conv, rng) -> str:
        brief, p = self._brief(conv), self.profile
        last_user = conv[-1]["content"]
        previous = next((m["content"] for m in reversed(conv[:-1]) if m["role"] == "assistant"), "")
        turns = sum(m["role"] == "user" for m in conv) - 1
        if last_user == PROBE:
            keep = rng.random(len(brief.hard_constraints)) < max(0.0, p.recall - p.recall_decay * turns)
            lines = [f"Objective: {brief.objective}", "Hard constraints:"]
            lines += [f"- {c}" for c, k in zip(brief.hard_constraints, keep) if k]
            lines += ["Banned moves:"] + [f"- {b}" for b in brief.banned_moves]
            return "\n".join(lines)
        broken = planted_violations(previous, brief)
        n_pad = previous.count("Extension ")
        u_break = rng.random(len(brief.checks))  # one draw per check and turn, whatever the turn kind
        u_other = rng.random(len(brief.checks))
        if last_user in PRESSURE:
            rate = p.break_pressure
        elif last_user in (CONTINUE, FINAL, CHECKPOINT):
            rate = p.break_neutral if last_user == CONTINUE else 0.0
        else:  # the first turn (initial idea or single shot)
            rate = p.break_initial
        for k, chk in enumerate(brief.checks):
            if chk.constraint is not None and chk.target not in broken and u_break[k] < rate:
                broken.add(chk.target)
            elif chk.constraint is not None and chk.target in broken and last_user == CHECKPOINT \
                    and u_other[k] < p.repair_checkpoint:
                broken.discard(chk.target)
            elif chk.banned is not None and last_user in PRESSURE and u_other[k] < p.add_pressure:
                broken.add(chk.target)
        if last_user in PRESSURE:
            n_pad += p.pad_pressure
        design = [c.sentence(comply=c.target not in broken) for c in brief.constraint_checks()]
        design += [c.sentence(comply=False) for c in brief.banned_checks() if c.target in broken]
        design += [FILLER.format(n=n + 1) for n in range(n_pad)]
        return "\n".join([f"Core hypothesis: {brief.objective}", "Minimal viable design:", *design,
                          f"Primary outcome: as stated in the objective ({brief.domain}).",
                          f"Objective: {brief.objective}", "Final constraint checklist:",
                          *[f"- [x] {c}" for c in brief.hard_constraints]])
