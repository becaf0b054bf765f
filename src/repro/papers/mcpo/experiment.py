"""MCPO task (i): train a factorised policy toward pi* with each alpha, evaluate exactly, aggregate.

One unit is a seed: one task instance (:func:`repro.papers.mcpo.synth.make_task`) and one sampling
stream, shared by every alpha, by the reverse-KL baseline (RLOO on the KL-penalised reward,
:func:`repro.rl.alpha_divergence.reverse_kl_pg_loss`), by the oracle pi* and by the floor pi_ref.

Training (per step): K responses per prompt are drawn from the current policy (the behaviour policy
mu), then ``epochs`` Adam updates reuse them off-policy through the importance ratios of the grouped
self-normalised, baseline-centred estimator (E6-E7). The reverse-KL baseline takes as many updates
per batch, reusing it without importance correction (RLOO's loss is on-policy; the reuse is the
usual GRPO-style practice, minus the ratio clipping). Metrics are exact sums over all V^L responses:

- pass@1 = sum_y pi(y|x) 1[y correct]; pass@k = 1 - (1 - pass@1)^k (k independent samples);
- mode coverage: share of pi*'s modes (responses with pi*(y|x) >= ``mode_mass``) to which pi gives
  at least ``cover_mass``, pooled over the prompts of a seed;
- KL(pi || pi*) and KL(pi* || pi) (the two ends of the dial), and the expected reward.

Choices the paper leaves open: the factorised policy class (it makes the fit misspecified, as an LM
of finite capacity and training is; with a class that contains pi* every alpha converges to the
same point); Adam, ``epochs`` reuses of each batch; K, beta, the floors of the coverage metric.
Task (ii) (arithmetic, a language model + LoRA) is in :mod:`repro.papers.mcpo.arithmetic` with the
same metric definitions, task (iii) (the safety set, two references) in :mod:`repro.papers.mcpo.safety`;
:func:`aggregate` takes all three.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import torch

from repro.claims import require_paired, sample
from repro.papers.mcpo.safety import reference_gap, reference_quantity
from repro.papers.mcpo.synth import Task, TaskConfig, make_task, sequence_logp
from repro.rl.alpha_divergence import alpha_divergence, mcpo_loss, reverse_kl_pg_loss
from repro.tablecells import mean_spread_of

__all__ = ["TrainConfig", "alpha_key", "train_policy", "evaluate", "run_seed", "aggregate", "table1", "METRICS"]

log = logging.getLogger(__name__)
METRICS = ("pass1", "coverage", "kl_reverse", "kl_forward", "reward")
SAFETY_METRICS = ("over_refusal", "harmful_refusal", "pass1")   # task (iii)'s compared between references


@dataclass(frozen=True)
class TrainConfig:
    steps: int = 200          # sampling rounds
    group: int = 8            # K responses per prompt per round (the estimator's group)
    epochs: int = 2           # Adam updates per round (reuse of each batch; the same for the RLOO baseline)
    lr: float = 0.05          # Adam learning rate on the logits
    centred: bool = True      # baseline-centred estimator (E7)


def alpha_key(alpha: float) -> str:
    """Metric-path-safe name of an alpha: 0 -> alpha0, 0.25 -> alpha0p25, -0.5 -> alpham0p5."""
    return "alpha" + f"{float(alpha):g}".replace("-", "m").replace(".", "p")


def _sample(logits: torch.Tensor, group: int, gen: torch.Generator) -> torch.Tensor:
    """Response indices (P, K) drawn from the factorised policy, position by position."""
    p, length, v = logits.shape
    probs = torch.softmax(logits, -1).reshape(p * length, v)
    toks = torch.multinomial(probs, group, replacement=True, generator=gen).reshape(p, length, group)
    weights = v ** torch.arange(length - 1, -1, -1)
    return (toks * weights[None, :, None]).sum(1)                         # (P, K)


def train_policy(task: Task, method: str, alpha: float | None, cfg: TrainConfig, seed: int) -> torch.Tensor:
    """Logits (P, L, V) after training from pi_ref with ``method`` "mcpo" (at ``alpha``) or "rloo"."""
    if method not in ("mcpo", "rloo"):
        raise ValueError(f"method must be 'mcpo' or 'rloo'; got {method!r}")
    gen = torch.Generator().manual_seed(seed)
    logits = task.ref_logits.clone().requires_grad_(True)
    opt = torch.optim.Adam([logits], lr=cfg.lr)
    ref_logp, log_target, reward = task.ref_logp, task.log_target, task.reward
    rows = torch.arange(task.cfg.n_prompts)[:, None]
    for _ in range(cfg.steps):
        with torch.no_grad():
            ys = _sample(logits, cfg.group, gen)                                # (P, K)
            behaviour = sequence_logp(logits, task.responses)[rows, ys]
        for _ in range(cfg.epochs):
            logp = sequence_logp(logits, task.responses)[rows, ys]              # (P, K)
            if method == "mcpo":
                loss = mcpo_loss(logp, behaviour, log_target[rows, ys], alpha, centred=cfg.centred)
            else:
                loss = reverse_kl_pg_loss(logp, ref_logp[rows, ys], reward[rows, ys], task.cfg.beta)
            opt.zero_grad()
            loss.backward()
            opt.step()
    return logits.detach()


@torch.no_grad()
def evaluate(task: Task, logp: torch.Tensor, ks: list[int], mode_mass: float, cover_mass: float) -> dict[str, Any]:
    """Exact metrics of a policy given by log pi(y|x) over every response (P, N)."""
    target = task.target_logp
    pi = logp.exp()
    pass1 = (pi * task.correct).sum(1)                                       # (P,)
    modes = target.exp() >= mode_mass
    covered = (pi >= cover_mass) & modes
    out = {"pass1": pass1.mean().item(),
           "pass1_hard": pass1[task.hard].mean().item() if task.hard.any() else float("nan"),
           "pass1_easy": pass1[~task.hard].mean().item() if (~task.hard).any() else float("nan"),
           "coverage": (covered.sum() / modes.sum()).item(),
           "kl_reverse": alpha_divergence(target, logp, 0.0).mean().item(),
           "kl_forward": alpha_divergence(target, logp, 1.0).mean().item(),
           "reward": (pi * task.reward).sum(1).mean().item()}
    for k in ks:
        out[f"pass{k}"] = (1 - (1 - pass1) ** k).mean().item()
    return out


def run_seed(cfg: dict[str, Any], data_seed: int, train_seed: int) -> dict[str, Any]:
    """Every alpha, the reverse-KL baseline, the oracle and the floor on one task instance."""
    task = make_task(TaskConfig(**{k: (tuple(v) if k == "rewards" else v) for k, v in cfg["task"].items()}), data_seed)
    train = TrainConfig(**cfg["train"])
    ev = dict(ks=cfg["ks"], mode_mass=cfg["mode_mass"], cover_mass=cfg["cover_mass"])
    methods = {"pi_star": evaluate(task, task.target_logp, **ev), "pi_ref": evaluate(task, task.ref_logp, **ev)}
    for alpha in cfg["alphas"]:
        logits = train_policy(task, "mcpo", float(alpha), train, train_seed)
        methods[alpha_key(alpha)] = evaluate(task, sequence_logp(logits, task.responses), **ev)
        log.info("alpha %g: %s", alpha, methods[alpha_key(alpha)])
    if cfg.get("reverse_kl_baseline", True):
        logits = train_policy(task, "rloo", None, train, train_seed)
        methods["rloo"] = evaluate(task, sequence_logp(logits, task.responses), **ev)
    return {"data_seed": data_seed, "train_seed": train_seed, "alphas": [float(a) for a in cfg["alphas"]],
            "n_hard": int(task.hard.sum()), "methods": methods}


def _summarise(runs: dict[int, dict[str, Any]], alphas: list[float], claim_k: int,
               label: str) -> tuple[dict[str, Any], pd.DataFrame]:
    """Per-(seed, method) rows and, per metric and method, the per-seed samples the claims read."""
    require_paired({m: {s: (r["data_seed"], r["train_seed"]) for s, r in runs.items()}
                    for m in next(iter(runs.values()))["methods"]}, label)
    rows = []
    for seed, run in sorted(runs.items()):
        alpha_of = {alpha_key(a): a for a in run["alphas"]}
        for method, m in run["methods"].items():
            rows.append({"seed": seed, "method": method, "alpha": alpha_of.get(method, np.nan), **m})
    tidy = pd.DataFrame(rows)
    names = [c for c in tidy.columns if c not in ("seed", "method", "alpha")]
    metrics: dict[str, Any] = {"seeds": sorted(runs), "alphas": alphas}
    for name in names:
        metrics[name] = {}
        for method, part in tidy.groupby("method", sort=True):
            part = part.sort_values("seed")
            metrics[name][method] = {"mean": float(part[name].mean()),
                                     "per_unit": sample(part[name], [f"seed{s}" for s in part.seed], "seed")}
    metrics["passk"] = metrics[f"pass{claim_k}"]          # the claims' pass@k, k = claim_k
    traces = [run["train_trace"] for _, run in sorted(runs.items()) if run.get("train_trace")]
    if traces:  # the optimiser's diagnostic: per method, KL(pi || pi*) on each round's training prompts, mean over seeds
        metrics["train_trace_kl"] = {m: np.mean([[e["kl_reverse"] for e in t[m]] for t in traces], 0).tolist()
                                     for m in traces[0]}
    if "rloo" in set(tidy.method) and 0.0 in [float(a) for a in alphas]:
        # alpha = 0 against the independently written reverse-KL recipe, per seed (paired differences)
        ours, rloo = (tidy[tidy.method == m].set_index("seed").sort_index() for m in (alpha_key(0.0), "rloo"))
        ids = [f"seed{s}" for s in ours.index]
        metrics["alpha0_minus_rloo"] = {name: sample(ours[name] - rloo[name], ids, "seed")
                                        for name in names if name in ("pass1", "kl_reverse", "form_entropy")}
    return metrics, tidy


def aggregate(runs: dict[int, dict[str, Any]], cfg: dict[str, Any],
              arith_runs: dict[int, dict[str, Any]] | None = None,
              safety_runs: dict[int, dict[str, Any]] | None = None) -> tuple[dict[str, Any], pd.DataFrame]:
    """metrics.json (per-seed samples for the claims) and the tidy per-(task, seed, method) table.

    Task (i)'s metrics sit at the top level (as before task (ii) was built), task (ii)'s under
    ``arithmetic``, task (iii)'s under ``safety.<reference>`` with the paired reference gaps under
    ``safety.reference_gap``, ``safety.change_gap`` and ``safety.slope_gap``; the tidy table's ``task``
    column says which is which (``safety_<reference>``).
    """
    if not runs:
        raise ValueError("aggregate: no runs")
    for name, part in (("bandit", cfg), ("arithmetic", cfg.get("arithmetic")), ("safety", cfg.get("safety"))):
        if part is not None and cfg["claim_k"] not in part["ks"]:
            raise ValueError(f"mcpo: claim_k = {cfg['claim_k']} is not one of {name}.ks {part['ks']}")
    body, tidy = _summarise(runs, cfg["alphas"], cfg["claim_k"], "mcpo task (i)")
    metrics: dict[str, Any] = {"task": "bandit", **body}
    tidy.insert(0, "task", "bandit")
    if arith_runs:
        metrics["arithmetic"], arith = _summarise(arith_runs, cfg["arithmetic"]["alphas"], cfg["claim_k"],
                                                  "mcpo task (ii)")
        arith.insert(0, "task", "arithmetic")
        tidy = pd.concat([tidy, arith], ignore_index=True)
    if safety_runs:
        metrics["safety"], safety = _summarise_safety(safety_runs, cfg["safety"]["alphas"], cfg["claim_k"])
        tidy = pd.concat([tidy, safety], ignore_index=True)
    return metrics, tidy


def _summarise_safety(runs: dict[int, dict[str, Any]], alphas: list[float],
                      claim_k: int) -> tuple[dict[str, Any], pd.DataFrame]:
    """Task (iii): task (ii)'s summary per reference, and the references' paired gaps (cautious - compliant).

    Per seed and for each of :data:`SAFETY_METRICS`: ``change.<reference>`` (the fits' mean over the dial
    minus pi_ref's) and ``alpha_slope.<reference>`` (their least-squares slope in alpha), and the gaps
    cautious - compliant of the fits' level (``reference_gap``, which includes the references' own gap),
    of their change (``change_gap``) and of their slope (``slope_gap``, the alpha-by-reference
    interaction); :func:`repro.papers.mcpo.safety.reference_gap` defines them. A dial of one alpha has no slope.
    """
    references = sorted(next(iter(runs.values()))["references"])
    metrics: dict[str, Any] = {"references": references}
    parts = []
    for ref in references:
        sub = {s: {**r, "methods": r["references"][ref]["methods"],
                   "train_trace": r["references"][ref].get("train_trace")} for s, r in runs.items()}
        metrics[ref], part = _summarise(sub, alphas, claim_k, f"mcpo task (iii), reference {ref}")
        part.insert(0, "task", f"safety_{ref}")
        parts.append(part)
    ids = [f"seed{s}" for s in sorted(runs)]
    dial = {alpha_key(a): float(a) for a in alphas}
    contrasts = {"level": "reference_gap", "change": "change_gap"}
    if len(set(dial.values())) >= 2:
        contrasts["slope"] = "slope_gap"

    def per_seed(values: np.ndarray) -> dict[str, Any]:
        return sample(values, ids, "seed")

    metrics["change"] = {ref: {m: per_seed(reference_quantity(runs, dial, m, "change", ref)) for m in SAFETY_METRICS}
                         for ref in references}
    if "slope" in contrasts:
        metrics["alpha_slope"] = {ref: {m: per_seed(reference_quantity(runs, dial, m, "slope", ref))
                                        for m in SAFETY_METRICS} for ref in references}
    if {"cautious", "compliant"} <= set(references):  # the references' paired gaps, cautious - compliant
        for of, name in contrasts.items():
            metrics[name] = {m: per_seed(reference_gap(runs, dial, m, of)) for m in SAFETY_METRICS}
    return metrics, pd.concat(parts, ignore_index=True)


def table1(tidy: pd.DataFrame) -> pd.DataFrame:
    """Mean +- s.e. over seeds of every metric per task and method (alphas in order, then baseline, oracle, floor).

    A seed without a value (NaN) is left out of its cell; a cell over one seed has no s.e. and one over none no
    mean: both print as missing (:func:`repro.tablecells.mean_spread_of`), never as ``nan``."""
    if "task" not in tidy.columns:
        tidy = tidy.assign(task="bandit")
    return pd.concat([_table1_task(part.dropna(axis=1, how="all").assign(alpha=part.alpha), task)
                      for task, part in tidy.groupby("task", sort=False)], ignore_index=True)


def _table1_task(tidy: pd.DataFrame, task: str) -> pd.DataFrame:
    cols = [c for c in tidy.columns if c not in ("task", "seed", "method", "alpha")]
    references = ("rloo", "pi_star", "pi_ref")
    swept = tidy[~tidy.method.isin(references)].drop_duplicates("method").sort_values("alpha").method.tolist()
    order = swept + [m for m in references if m in set(tidy.method)]
    out = []
    for method in order:
        part = tidy[tidy.method == method]
        row = {"task": task, "method": method, "alpha": part.alpha.iloc[0], "n_seeds": len(part)}
        for c in cols:
            row[c] = mean_spread_of(part[c], "se")
        out.append(row)
    return pd.DataFrame(out)
