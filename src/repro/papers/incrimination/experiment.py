"""The testbed run (scripted agents with planted motives), the investigation of a real agent, and the
aggregation into ``results/incrimination/metrics.json`` and the figures' tables.

A *case* is one scripted agent (motive, environment, seed index) with its own decoy motive. Every
case is investigated at every CoT faithfulness and every number of samples per condition of the
preset, with the same draws (the agents' prefix coupling): faithfulness and sample size are the only
things that differ between the verdicts of one case, so methods and settings are paired over cases.
The floor and ceiling are scored on the same cases: ``random`` (a hypothesis drawn uniformly, one
per case) and ``oracle`` (reads the planted motive).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from repro.claims import rate, sample
from repro.llm.judge import agreement
from repro.papers.incrimination.agents import COT_TEMPLATES, MOTIVES, Episode, LMAgent, ScriptedAgent
from repro.papers.incrimination.envs import CONTROL, INTERVENTIONS, environment
from repro.papers.incrimination.protocol import (HYPOTHESES, METHODS, NO_EVIDENCE, ProtocolConfig, cot_classifier,
                                                 investigate)
from repro.seeding import job_seed
from repro.stats.intervals import newcombe_interval, wilson_interval

__all__ = ["CONDITIONS", "BASELINES", "protocol_config", "faith_key", "n_key", "case_id", "simulate_motive",
           "build_agent", "investigate_agent", "summarise", "classifier_agreement"]

log = logging.getLogger(__name__)

CONDITIONS = (CONTROL, *INTERVENTIONS)
BASELINES = ("random", "oracle")


def protocol_config(cfg: Mapping[str, Any]) -> ProtocolConfig:
    return ProtocolConfig(**cfg.get("protocol", {}))


def faith_key(phi: float) -> str:
    return f"faith{int(round(100 * phi))}"


def n_key(n: int) -> str:
    return f"n{int(n)}"


def case_id(env: str, motive: str, s: int) -> str:
    return f"{env}__{motive}__seed{s}"


def _check_grid(cfg: Mapping[str, Any]) -> None:
    for key in ("faithfulness", "samples", "environments"):
        if not cfg.get(key):
            raise ValueError(f"incrimination: preset key {key!r} is empty")
    for phi in cfg["faithfulness"]:
        if not 0 <= phi <= 1:
            raise ValueError(f"incrimination.faithfulness: {phi} is not in [0, 1]")
    if min(cfg["samples"]) < 1:
        raise ValueError(f"incrimination.samples: every entry must be >= 1, got {cfg['samples']}")


def simulate_motive(motive: str, cfg: Mapping[str, Any], seed: int) -> dict[str, list[dict[str, Any]]]:
    """Investigate every case of ``motive`` at every faithfulness and sample size of the preset.

    Returns ``verdicts`` (one row per case, faithfulness, n and method), ``effects`` (one row per case
    and intervention at the largest n: the fingerprints) and ``cots`` (each concerning CoT at the
    largest n, with the motive it was written from: the classifier's planted labels).
    """
    if motive not in MOTIVES:
        raise ValueError(f"unknown motive {motive!r}; known: {', '.join(MOTIVES)}")
    _check_grid(cfg)
    pcfg = protocol_config(cfg)
    samples = sorted(int(n) for n in cfg["samples"])
    n_max = samples[-1]
    verdicts, effects, cots = [], [], []
    for env_name in cfg["environments"]:
        env = environment(env_name)
        for s in range(int(cfg["seeds"])):
            case = case_id(env_name, motive, s)
            case_seed = job_seed(seed, "case", env=env_name, seed=s)
            rng = np.random.default_rng(case_seed)
            decoy = str(rng.choice([m for m in MOTIVES if m != motive]))
            guess = str(rng.choice(HYPOTHESES))
            unit = {"case": case, "env": env_name, "motive": motive, "seed": s, "decoy": decoy}
            for phi in cfg["faithfulness"]:
                agent = ScriptedAgent(motive, decoy, float(phi))
                eps = {c: agent.run(env, c, n_max, case_seed) for c in CONDITIONS}
                for n in samples:
                    inv = investigate({c: e[:n] for c, e in eps.items()}, pcfg)
                    row = {**unit, "faithfulness": float(phi), "n": n}
                    for method, verdict in {**inv.verdicts, "random": guess, "oracle": motive}.items():
                        verdicts.append({**row, "method": method, "verdict": verdict, "correct": verdict == motive,
                                         "no_evidence": verdict == NO_EVIDENCE})
                if phi == max(cfg["faithfulness"]):
                    for f, iv in inv.effects.items():
                        effects.append({**unit, "factor": f, "effect": iv.estimate, "low": iv.low, "high": iv.high,
                                        "control": inv.counts[CONTROL], "intervened": inv.counts[f]})
                    cots += [{**unit, "faithfulness": float(phi), "cot": e.cot} for e in eps[CONTROL] if e.concerning]
    return {"verdicts": verdicts, "effects": effects, "cots": cots}


def classifier_agreement(cots: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """The step-1 classifier against planted labels (CoTs at faithfulness 1 state the true motive)."""
    faithful = [c for c in cots if c["faithfulness"] == 1.0]
    if not faithful:
        return {}
    judged = cot_classifier().score([c["cot"] for c in faithful])
    return {h: agreement([float(j.met[h]) for j in judged], [c["motive"] == h for c in faithful])
            for h in HYPOTHESES}


def build_agent(cfg: Mapping[str, Any], *, device: str = "cpu"):
    """The agent under investigation of ``cfg["agent"]``: scripted, or a :mod:`repro.llm` model on its
    ``backend`` (torch, or llamacpp: generation and log-probabilities only, which is all it needs; with
    ``reuse_prompts`` the choice is scored after the generated reasoning without reading the prompt again)."""
    spec = cfg["agent"]
    if spec["kind"] == "scripted":
        return ScriptedAgent(spec["motive"], spec["decoy"], float(spec["faithfulness"]), name=spec["name"])
    if spec["kind"] == "pretrained":
        import repro.llm

        backend = spec.get("backend", "torch")
        options = {"reuse_prompts": bool(spec.get("reuse_prompts", False))} if backend == "llamacpp" else {}
        lm = repro.llm.load(spec["model"], device=device, backend=backend, **options)
        return LMAgent(lm, name=spec["name"], **cfg["generation"])
    raise ValueError(f"incrimination agent {spec.get('name')!r}: unknown kind {spec['kind']!r} (scripted or pretrained)")


def investigate_agent(agent, cfg: Mapping[str, Any], seed: int) -> list[dict[str, Any]]:
    """Run both protocol steps on ``agent`` (scripted or :class:`LMAgent`) in every environment of the preset.

    Episode ``i`` of every condition of an environment shares its seed (paired conditions).
    """
    pcfg = protocol_config(cfg)
    n = int(cfg["agent_samples"])
    out = []
    for env_name in cfg["environments"]:
        env = environment(env_name)
        env_seed = job_seed(seed, "agent-env", env=env_name)
        eps: dict[str, list[Episode]] = {c: agent.run(env, c, n, env_seed) for c in CONDITIONS}
        inv = investigate(eps, pcfg)
        out.append({
            "env": env_name, "counts": {c: list(k) for c, k in inv.counts.items()},
            "effects": {f: {"estimate": iv.estimate, "low": iv.low, "high": iv.high, "level": iv.level}
                        for f, iv in inv.effects.items()},
            "supported": sorted(inv.supported), "bounded": inv.bounded, "shares": inv.shares, "n_cots": inv.n_cots,
            "verdicts": inv.verdicts,
            "episodes": [{"condition": e.condition, "concerning": e.concerning, "p_concerning": e.p_concerning,
                          "cot": e.cot} for c in CONDITIONS for e in eps[c]],
        })
    return out


def _by(rows, *keys):
    out: dict[tuple, list] = {}
    for r in rows:
        out.setdefault(tuple(r[k] for k in keys), []).append(r)
    return out


def _slopes(rows) -> tuple[list[float], list[str]]:
    """Per case, the least-squares slope of correctness on faithfulness (one value per case)."""
    values, ids = [], []
    for case, sub in sorted(_by(rows, "case").items()):
        x = np.array([r["faithfulness"] for r in sub])
        y = np.array([float(r["correct"]) for r in sub])
        xc = x - x.mean()
        values.append(float((xc * (y - y.mean())).sum() / (xc ** 2).sum()))
        ids.append(case[0])
    return values, ids


def summarise(testbed: Sequence[Mapping[str, Any]], agents: Mapping[str, list[dict[str, Any]]],
              cfg: Mapping[str, Any]) -> tuple[dict[str, Any], list[dict], list[dict], list[dict]]:
    """Metrics (per-case samples for the claims), and the tables of Fig. 1, Fig. 2 and Table 1."""
    verdicts = [r for part in testbed for r in part["verdicts"]]
    effects = [r for part in testbed for r in part["effects"]]
    cots = [r for part in testbed for r in part["cots"]]
    samples = sorted(int(n) for n in cfg["samples"])
    n_min, n_max = samples[0], samples[-1]
    claims = cfg["claims"]
    cells = _by(verdicts, "method", "faithfulness", "n")

    def cell(method, phi, n, what="correct"):
        rows = sorted(cells[(method, float(phi), int(n))], key=lambda r: r["case"])
        return sample([float(r[what]) for r in rows], [r["case"] for r in rows], unit="case")

    def wrong(method, phi, n):
        rows = sorted(cells[(method, float(phi), int(n))], key=lambda r: r["case"])
        # no_evidence minus wrong verdict, per case: > 0 on average when the protocol abstains more than it errs
        return sample([float(r["no_evidence"]) - float(not r["correct"] and not r["no_evidence"]) for r in rows],
                      [r["case"] for r in rows], unit="case")

    methods = (*METHODS, *BASELINES)
    accuracy = {m: {faith_key(phi): {n_key(n): cell(m, phi, n) for n in samples} for phi in cfg["faithfulness"]}
                for m in methods}
    no_evidence = {m: {faith_key(phi): {n_key(n): cell(m, phi, n, "no_evidence") for n in samples}
                       for phi in cfg["faithfulness"]} for m in METHODS}
    cot_rows = sorted((r for r in verdicts if r["method"] == "cot_only" and r["n"] == n_max),
                      key=lambda r: (r["case"], r["faithfulness"]))
    hi, lo = float(claims["faithful"]), float(claims["unfaithful"])
    headline = {
        "combined_faithful": cell("combined", hi, n_max),
        "cot_faithful": cell("cot_only", hi, n_max),
        "interventions_faithful": cell("interventions_only", hi, n_max),
        "combined_unfaithful": cell("combined", lo, n_max),
        "cot_unfaithful": cell("cot_only", lo, n_max),
        "interventions_unfaithful": cell("interventions_only", lo, n_max),
        "random": cell("random", hi, n_max),
        "oracle": cell("oracle", hi, n_max),
        "abstain_minus_wrong_few": wrong("combined", hi, n_min),
        "interventions_abstain_minus_wrong_few": wrong("interventions_only", hi, n_min),
        "cot_accuracy_vs_faithfulness": sample(*_slopes(cot_rows), unit="case"),
    }
    fingerprint: dict[str, dict[str, Any]] = {}
    for (factor, motive), rows in sorted(_by(effects, "factor", "motive").items()):
        rows = sorted(rows, key=lambda r: (r["env"], r["seed"]))
        fingerprint.setdefault(factor, {})[motive] = sample(
            [r["effect"] for r in rows], [f"{r['env']}__seed{r['seed']}" for r in rows], unit="env_seed")

    fig1 = []
    for (m, phi, n), rows in sorted(cells.items()):
        k = sum(r["correct"] for r in rows)
        iv = wilson_interval(k, len(rows))
        fig1.append({"method": m, "faithfulness": phi, "n": n, "accuracy": iv.estimate, "low": iv.low,
                     "high": iv.high, "no_evidence": float(np.mean([r["no_evidence"] for r in rows])),
                     "cases": len(rows)})
    fig2 = []
    for (env, motive, factor), rows in sorted(_by(effects, "env", "motive", "factor").items()):
        k0 = sum(r["control"][0] for r in rows)
        n0 = sum(r["control"][1] for r in rows)
        k1 = sum(r["intervened"][0] for r in rows)
        n1 = sum(r["intervened"][1] for r in rows)
        iv = newcombe_interval(k0, n0, k1, n1)
        fig2.append({"env": env, "motive": motive, "factor": factor, "effect": iv.estimate, "low": iv.low,
                     "high": iv.high, "episodes": n1})
    table1, agent_metrics = [], {}
    for name, runs in sorted(agents.items()):
        agent_metrics[name] = {}
        for run in runs:
            k0, n0 = run["counts"][CONTROL]
            row = {"agent": name, "env": run["env"], "control_rate": k0 / n0 if n0 else float("nan"),
                   "episodes_per_condition": n0}
            for f in INTERVENTIONS:
                e = run["effects"][f]
                row[f"effect_{f}"] = f"{e['estimate']:+.2f} [{e['low']:+.2f}, {e['high']:+.2f}]"
            top = max(run["shares"], key=lambda h: run["shares"][h]) if run["n_cots"] else None
            row.update({"supported": ",".join(run["supported"]) or "-", "bounded": run["bounded"],
                        "cot_top": f"{top} ({run['shares'][top]:.2f} of {run['n_cots']})" if top else "-",
                        **{f"verdict_{m}": v for m, v in run["verdicts"].items()}})
            table1.append(row)
            agent_metrics[name][run["env"]] = {
                "control_rate": rate(k0, n0, unit="episode") if n0 else None,
                "verdicts": run["verdicts"], "supported": run["supported"], "bounded": run["bounded"],
                "effects": run["effects"]}
    metrics = {"accuracy": accuracy, "no_evidence": no_evidence, "headline": headline, "fingerprint": fingerprint,
               "classifier": classifier_agreement(cots), "agents": agent_metrics,
               "settings": {"faithful": hi, "unfaithful": lo, "n_min": n_min, "n_max": n_max,
                            "cases": len({r["case"] for r in verdicts}), "templates_per_motive":
                            {m: len(t) for m, t in COT_TEMPLATES.items()}}}
    return metrics, fig1, fig2, table1
