"""M²LE continual learning with LoRA merging, its baselines, aggregation and Table 1.

M²LE (NeurIPS 2026; abstract only, no full text): after task ``t`` its LoRA update ``Delta = s B A``
of every adapted layer is merged into the weights as ``M <- M + m ⊙ Delta``, where ``m`` solves the
joint second-order objective over previous and current tasks (HIM, ``repro.methods.merging``), and
task ``t`` is trained under random low-rank weight perturbations that simulate later merges (TSP).

Methods (registry ``METHODS``; the ``{method}`` key of every table), same budget, seeds, data and
task order; the LoRA initialisation and minibatch order of task ``t`` depend on (sequence, seed, t)
only, never on the method:

- ``seq``: sequential LoRA fine-tuning, each update merged whole (alpha = 1): the floor.
- ``fixed``: every update scaled by one preset alpha.
- ``pm``: Perturb-and-Merge's optimal scalar (arXiv 2505.22389 Eq. 8), one alpha per task over all
  adapted layers, from the same diagonal Fisher and the same earlier optima HIM uses. This is P&M's
  merge only: its other half, training with random perturbations along the task vector (its
  finite-difference stand-in for a ``Delta^T H Delta`` regulariser), is absent from ``pm``.
- ``olora``: O-LoRA (Wang et al. 2023, arXiv 2310.14152): the new ``A`` of each layer is pushed
  orthogonal to every previous task's ``A`` by ``lambda_orth sum_i |A_i A_t^T|_1``; merged whole.
- ``ewc``: EWC (Kirkpatrick et al. 2017) on the LoRA update: ``lambda_ewc / 2 sum F_<t ⊙ (s B A)^2``,
  with ``F_<t`` the summed Fisher of the previous tasks; merged whole.
- ``him``: HIM alone (element-wise modulation, Eq. E2 of repro.methods.merging, damped to P&M's alpha,
  kept in [0, 1]).
- ``m2le``: HIM + TSP.
- ``joint``: one LoRA trained on the union of all tasks with the same number of steps as the
  whole sequence (the ceiling; it has no sequence, so no forgetting).

Metrics (per sequence and seed): the accuracy matrix ``R[t, i]`` (task ``i`` after merging task
``t``), average accuracy ``mean_i R[T, i]``, average forgetting ``mean_{i<T} max_{t<T} R[t, i] - R[T, i]``
and BWT ``mean_{i<T} R[T, i] - R[i, i]`` (Lopez-Paz & Ranzato 2017; Chaudhry et al. 2018).

**Choices the spec leaves open.**
- TSP: at every step, each adapted layer gets ``E = rho * ref * P Q^T / |P Q^T|_F`` with Gaussian
  ``P`` (out x r), ``Q`` (in x r), ``r`` the LoRA rank, redrawn each step; ``ref`` is the mean
  Frobenius norm of the merged updates of the previous tasks in that layer (the size later merges
  produce), or of the current update while no task is merged. ``rho = tsp.scale`` (preset).
- The Fisher of task ``t`` is taken once, at its trained weights before the merge, on
  ``n_fisher`` training examples, and added to the running sum of previous tasks (no replay).
- Each earlier task's optimum is its own trained weights before its merge, ``theta_i* = theta_{i-1} +
  Delta_i`` (P&M's objective; ``train.previous_optima: own``, the default). Per adapted layer the
  run keeps ``sum_i h_i`` and ``sum_i h_i ⊙ theta_i*`` (``repro.methods.merging.OptimaMemory``,
  relative to the pretrained weight), so memory does not grow with the sequence. The variant
  ``previous_optima: merged`` puts every earlier optimum at the last merged weights instead: ``m``
  is then the curvature ratio ``h_t / (h_t + sum_{i<t} h_i)`` and each merge keeps about ``1/t`` of
  an update when the tasks' curvatures are alike (this rebuild's first form; not P&M's objective).
  Both forms apply to ``pm`` and ``him``/``m2le`` alike; EWC's penalty is unchanged (its anchor is
  the current merged weights).
- Task-incremental evaluation for split digits, shapes and remote (logits restricted to the task's
  classes; the class splits read the first k logits).
- ``shapes`` and ``remote``: 10 classes form the base task the backbone is pretrained on, disjoint
  from every task's classes (the pretrained ViT of the paper has seen ImageNet, not the benchmark's
  split); 5 classes per task.
- ``blocks`` runs on the MLP backbone in every preset (``sequences.blocks.backbone: {kind: mlp}``;
  a sequence's override names the architecture only, LoRA rank, alpha and pretraining stay the
  preset's): it has no image, on the Mixer its base-task test accuracy was 0.23 (the MLP's 0.58),
  and the Mixer's patch embedding mixes the planted private blocks that HIM's test checks.
- The Mixer's size (2x2 patches, 32 channels, depth 2, LoRA rank 8 as the MLP had) was chosen from
  diagnostics of the backbone (tokens per image, pretraining accuracy, cost of a LoRA step), never
  from a verdict; training settings, lambdas and seeds are those of the MLP build.

**Deviations.** A small MLP-Mixer (2 blocks of 32 channels on 2x2 patches at small; ``model.py``)
pretrained on a permuted/synthetic base task instead of a ViT-B/16 pretrained on ImageNet; LoRA on
its token- and channel-mixing layers (a Mixer has no attention; these are its counterparts of a
ViT's attention and MLP weights); the first build's 2-hidden-layer MLP remains a preset variant
(``backbone.kind: mlp``); 8x8 digits, synthetic
feature-block tasks and 10x10 generated shape images instead of ImageNet-R / CIFAR-100 class splits
(the ``remote`` sequence reads those splits, downsampled, but is not run at any preset: it needs
the network); the frozen
pretrained head is shared by all tasks (no per-task classifier).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
import torch.nn.functional as F

from repro.claims import put_sample
from repro.methods.merging import OptimaMemory, elementwise_modulation, pm_alpha
from repro.nn.lora_backbone import (
    BackboneConfig,
    LoraBackbone,
    accuracy,
    fisher_diag,
    local_labels,
    make_backbone,
    pretrain,
)
from repro.papers.m2le.synth import Sequence, Task, make_sequence
from repro.registry import Registry
from repro.seeding import job_seed

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "TrainConfig",
    "METHODS",
    "build_sequence",
    "backbone_config",
    "pretrain_backbone",
    "run_method",
    "run_unit",
    "aggregate",
    "claim_intervals",
    "MODULATION_CLAIM",
    "table1",
    "cl_metrics",
    "MODULATION_BINS",
    "ORDER",
]

log = logging.getLogger(__name__)

MODULATION_BINS = np.linspace(0.0, 1.0, 41)
#: The claim on the spread of HIM's modulation (on the planted blocks); Fig. 2 draws its rule on every sequence.
MODULATION_CLAIM = "modulation_far_from_uniform"
ORDER = ("seq", "fixed", "pm", "olora", "ewc", "him", "m2le", "joint")


@dataclass(frozen=True)
class TrainConfig:
    epochs: int = 10
    """epochs per task"""
    lr: float = 1e-2
    """Adam learning rate of the LoRA factors"""
    batch_size: int = 64
    n_fisher: int = 200
    """training examples of the task for its diagonal Fisher"""
    fixed_alpha: float = 0.5
    """alpha of the fixed scalar merge"""
    damping: float = 1e-3
    """HIM damping toward P&M's alpha, relative to the mean curvature"""
    previous_optima: str = "own"
    """where the joint objective puts the earlier tasks' optima (P&M and HIM): ``own`` (each task's trained
    weights, P&M's objective) or ``merged`` (the weights after the last merge: the curvature-ratio variant)"""
    tsp_scale: float = 0.5
    """rho: TSP perturbation norm relative to a merged update's norm"""
    lambda_orth: float = 0.5
    """O-LoRA orthogonality weight"""
    lambda_ewc: float = 100.0
    """EWC penalty weight"""


@dataclass
class _Method:
    merge: str  # "one", "fixed", "pm", "him"
    tsp: bool = False
    penalty: str | None = None  # "olora", "ewc"
    needs_fisher: bool = field(init=False)

    def __post_init__(self):
        self.needs_fisher = self.merge in ("pm", "him") or self.penalty == "ewc"


PREVIOUS_OPTIMA = ("own", "merged")


METHODS: Registry = Registry("m2le method")
for _name, _m in {
    "seq": _Method("one"),
    "fixed": _Method("fixed"),
    "pm": _Method("pm"),
    "olora": _Method("one", penalty="olora"),
    "ewc": _Method("one", penalty="ewc"),
    "him": _Method("him"),
    "m2le": _Method("him", tsp=True),
}.items():
    METHODS.register(_name)(lambda _m=_m: _m)
METHODS.register("joint")(lambda: None)


REMOTE_FETCH_KEYS = ("url", "sha256", "image_size", "mode")


def build_sequence(cfg: dict[str, Any], sequence: str, data_seed: int, data_path: str | None = None) -> Sequence:
    """The sequence's tasks; ``remote`` reads the fetched set at ``data_path`` (its fetch keys are the rule's)."""
    spec = {k: v for k, v in cfg["sequences"][sequence].items() if k not in REMOTE_FETCH_KEYS and k != "backbone"}
    if sequence == "remote":
        spec["path"] = data_path
    return make_sequence(sequence, spec.pop("n_tasks"), data_seed, **spec)


def backbone_config(cfg: dict[str, Any], sequence: str) -> BackboneConfig:
    """The preset's ``backbone`` with the sequence's own ``backbone`` fields over it (``blocks`` has no
    image, so the presets give it the MLP: a patch embedding would mix its planted feature blocks)."""
    own = cfg.get("sequences", {}).get(sequence, {}).get("backbone", {})
    return BackboneConfig(**{**cfg.get("backbone", {}), **own})


def pretrain_backbone(cfg: dict[str, Any], seq: Sequence, seed: int) -> tuple[dict[str, torch.Tensor], dict]:
    """Pretrain the backbone on the base task; returns its state dict and base-task accuracies."""
    bcfg = backbone_config(cfg, seq.name)
    torch.manual_seed(seed)
    model = make_backbone(bcfg, seq.n_features, seq.grid, seq.patch)
    losses = pretrain(model, seq.base.x_train, seq.base.y_train, seed)
    stats = {
        "base_train_acc": accuracy(model, seq.base.x_train, seq.base.y_train, seq.base.classes),
        "base_test_acc": accuracy(model, seq.base.x_test, seq.base.y_test, seq.base.classes),
        "final_loss": losses[-1],
    }
    return model.state_dict(), stats


def _load(cfg, seq, state) -> LoraBackbone:
    model = make_backbone(backbone_config(cfg, seq.name), seq.n_features, seq.grid, seq.patch)
    model.load_state_dict(state)
    model.freeze_backbone()
    return model


def _tsp_draw(model: LoraBackbone, ref: list[float], rho: float, g: torch.Generator) -> None:
    with torch.no_grad():
        for i in range(model.n_adapted):
            out_dim, in_dim = model.merged(i).shape
            p = torch.randn(out_dim, model.cfg.rank, generator=g)
            q = torch.randn(in_dim, model.cfg.rank, generator=g)
            e = p @ q.T
            size = ref[i] if ref[i] > 0 else float(model.update(i).norm())
            model.perturb(i).copy_(rho * size * e / e.norm())


def _train_task(
    model: LoraBackbone,
    tasks: list[Task],
    method: _Method | None,
    tc: TrainConfig,
    seed: int,
    prev_A: list[list[torch.Tensor]],
    fisher_prev: list[torch.Tensor] | None,
    merged_norms: list[list[float]],
    steps_per_epoch: int | None = None,
) -> None:
    """Train a fresh LoRA on ``tasks`` (one task, or all of them for ``joint``)."""
    g = torch.Generator().manual_seed(seed)
    model.reset_lora(g)
    opt = torch.optim.Adam([*model.A, *model.B], lr=tc.lr)
    xs = [t.x_train for t in tasks]
    ys = [local_labels(t.y_train, t.classes) for t in tasks]
    cls = [list(t.classes) for t in tasks]
    sizes = [len(y) for y in ys]
    n = sum(sizes)
    bs = tc.batch_size
    n_steps = tc.epochs * (steps_per_epoch or -(-n // bs))
    owner = torch.cat([torch.full((s,), k) for k, s in enumerate(sizes)])
    row = torch.cat([torch.arange(s) for s in sizes])
    ref = [float(np.mean(v)) if v else 0.0 for v in merged_norms] if merged_norms else [0.0] * model.n_adapted
    order = torch.randperm(n, generator=g)
    pos = 0
    for _ in range(n_steps):
        if pos + bs > n:
            order, pos = torch.randperm(n, generator=g), 0
        idx = order[pos : pos + bs]
        pos += bs
        if method is not None and method.tsp:
            _tsp_draw(model, ref, tc.tsp_scale, g)
        logits = model(torch.cat([xs[k][row[idx][owner[idx] == k]] for k in range(len(tasks))]))
        targets = torch.cat([ys[k][row[idx][owner[idx] == k]] for k in range(len(tasks))])
        counts = [int((owner[idx] == k).sum()) for k in range(len(tasks))]
        parts, start = [], 0
        for k, c in enumerate(counts):
            if c:
                parts.append(
                    F.cross_entropy(logits[start : start + c][:, cls[k]], targets[start : start + c], reduction="sum")
                )
            start += c
        loss = sum(parts) / len(idx)
        if method is not None and method.penalty == "olora" and prev_A:
            loss = loss + tc.lambda_orth * sum(
                (a_prev @ model.A[i].T).abs().sum() for As in prev_A for i, a_prev in enumerate(As)
            )
        if method is not None and method.penalty == "ewc" and fisher_prev is not None:
            loss = loss + tc.lambda_ewc / 2 * sum((f * model.update(i) ** 2).sum() for i, f in enumerate(fisher_prev))
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        for i in range(model.n_adapted):
            model.perturb(i).zero_()


def run_method(
    cfg: dict[str, Any], seq: Sequence, state: dict[str, torch.Tensor], method_name: str, train_seed: int
) -> dict[str, Any]:
    """One method over the whole sequence; returns the accuracy matrix and the merge record."""
    tc = TrainConfig(**cfg.get("train", {}))
    if tc.previous_optima not in PREVIOUS_OPTIMA:
        raise ValueError(f"m2le train.previous_optima must be one of {PREVIOUS_OPTIMA}; got {tc.previous_optima!r}")
    method = METHODS.create(method_name)
    model = _load(cfg, seq, state)
    T = len(seq.tasks)
    acc = np.full((T, T), np.nan)

    def evaluate(t):
        for i, task in enumerate(seq.tasks):
            acc[t, i] = accuracy(model, task.x_test, task.y_test, task.classes)

    if method is None:  # joint training: one adapter on the union, the sequence's budget of steps
        steps = sum(-(-len(t.y_train) // tc.batch_size) for t in seq.tasks)
        _train_task(model, seq.tasks, None, tc, job_seed(train_seed, "joint"), [], None, [], steps_per_epoch=steps)
        with torch.no_grad():
            for i in range(model.n_adapted):
                model.merged(i).add_(model.update(i))
                model.B[i].zero_()
        evaluate(T - 1)
        acc[: T - 1] = np.nan
        return {"acc": acc.tolist(), "alphas": [], "modulation": []}

    prev_A: list[list[torch.Tensor]] = []
    fisher_prev: list[torch.Tensor] | None = None
    merged_norms: list[list[float]] = [[] for _ in range(model.n_adapted)]
    # each earlier task's own optimum (its weights before its merge) and curvature, per layer, relative to W0
    memory = [OptimaMemory(tuple(model.merged(i).shape)) for i in range(model.n_adapted)]
    own = tc.previous_optima == "own"
    alphas, modulation = [], []
    for t, task in enumerate(seq.tasks):
        # same LoRA init and batch order for task t whatever the method: paired
        _train_task(model, [task], method, tc, job_seed(train_seed, "task", t), prev_A, fisher_prev, merged_norms)
        deltas = [model.update(i).detach().clone() for i in range(model.n_adapted)]
        if method.needs_fisher:
            n_f = min(tc.n_fisher, len(task.y_train))
            h_t = fisher_diag(model, task.x_train[:n_f], task.y_train[:n_f], task.classes)
            h_prev = fisher_prev if fisher_prev is not None else [torch.zeros_like(h) for h in h_t]
            pulls = [mem.pull(model.merged(i)) for i, mem in enumerate(memory)] if own else None  # (E2)'s g
        if method.merge == "one":
            factors = [torch.ones_like(d) for d in deltas]
        elif method.merge == "fixed":
            factors = [torch.full_like(d, tc.fixed_alpha) for d in deltas]
        else:
            alpha = pm_alpha(
                torch.cat([d.flatten() for d in deltas]),
                torch.cat([h.flatten() for h in h_t]),
                torch.cat([h.flatten() for h in h_prev]),
                torch.cat([g.flatten() for g in pulls]) if own else None,
            )
            alphas.append(alpha)
            if method.merge == "pm":
                factors = [torch.full_like(d, alpha) for d in deltas]
            else:
                factors = [
                    elementwise_modulation(
                        h, hp, alpha, delta=d if own else None, pull=pulls[i] if own else None, damping=tc.damping
                    )
                    for i, (h, hp, d) in enumerate(zip(h_t, h_prev, deltas))
                ]
                modulation.append(
                    {
                        "task": t,
                        "alpha": alpha,
                        "layers": [
                            {
                                "layer": i,
                                "mean": float(m.mean()),
                                "sd": float(m.std()),
                                "at_zero": float((m <= 0).double().mean()),
                                "at_one": float((m >= 1).double().mean()),
                                "hist": np.histogram(m.clamp(0, 1).numpy(), bins=MODULATION_BINS)[0].tolist(),
                            }
                            for i, m in enumerate(factors)
                        ],
                    }
                )
        if method.merge in ("pm", "him") and own:
            for i, (mem, h, d) in enumerate(zip(memory, h_t, deltas)):
                mem.add(h, model.merged(i) + d)  # task t's own optimum, before its merge
        with torch.no_grad():
            for i, (d, m) in enumerate(zip(deltas, factors)):
                model.merged(i).add_(m * d)
                merged_norms[i].append(float((m * d).norm()))
                model.B[i].zero_()
        if method.needs_fisher:
            fisher_prev = [hp + h for hp, h in zip(h_prev, h_t)]
        prev_A.append([a.detach().clone() for a in model.A])
        evaluate(t)
    return {"acc": acc.tolist(), "alphas": alphas, "modulation": modulation}


def run_unit(
    cfg: dict[str, Any],
    sequence: str,
    state: dict[str, torch.Tensor],
    data_seed: int,
    train_seed: int,
    data_path: str | None = None,
) -> dict[str, Any]:
    """Every method on one (sequence, seed) unit: same data, backbone, LoRA inits and batch orders."""
    seq = build_sequence(cfg, sequence, data_seed, data_path)
    out = {}
    for name in cfg["methods"]:
        out[name] = run_method(cfg, seq, state, name, train_seed)
        a = np.asarray(out[name]["acc"])
        log.info("%s %s: final average accuracy %.3f", sequence, name, float(np.nanmean(a[-1])))
    return {"sequence": sequence, "n_tasks": len(seq.tasks), "methods": out}


def cl_metrics(acc: np.ndarray) -> dict[str, float]:
    """Average accuracy, forgetting and BWT of an accuracy matrix (rows: after task t)."""
    T = acc.shape[0]
    final = acc[-1]
    out = {"avg_acc": float(np.mean(final)), "task1_final": float(final[0])}
    if T > 1 and not np.isnan(acc[0, 0]):
        out["forgetting"] = float(np.mean([np.max(acc[: T - 1, i]) - final[i] for i in range(T - 1)]))
        out["bwt"] = float(np.mean([final[i] - acc[i, i] for i in range(T - 1)]))
    else:
        out["forgetting"] = out["bwt"] = float("nan")
    return out


def aggregate(runs: dict[tuple[str, int], dict], cfg: dict[str, Any]):
    """metrics.json (per-seed samples), the tidy per-run table, the curve table and the modulation table."""
    import pandas as pd

    rows, curve, mod = [], [], []
    for (sequence, seed), run in sorted(runs.items()):
        for method, res in run["methods"].items():
            acc = np.asarray(res["acc"], dtype=float)
            layers = [layer for rec in res["modulation"] for layer in rec["layers"]]
            spreads = [layer["sd"] for layer in layers]
            layer_mean = {
                f"mod_{k}": float(np.mean([layer[k] for layer in layers])) if layers else float("nan")
                for k in ("mean", "at_zero", "at_one")
            }
            rows.append(
                {
                    "sequence": sequence,
                    "seed": seed,
                    "method": method,
                    **cl_metrics(acc),
                    "mod_sd": float(np.mean(spreads)) if spreads else float("nan"),
                    **layer_mean,
                    "alpha_mean": float(np.mean(res["alphas"])) if res["alphas"] else float("nan"),
                }
            )
            for t in range(acc.shape[0]):
                if not np.isnan(acc[t, 0]):
                    curve.append(
                        {
                            "sequence": sequence,
                            "seed": seed,
                            "method": method,
                            "after_task": t + 1,
                            "task1_acc": acc[t, 0],
                            "running_avg": float(np.mean(acc[t, : t + 1])),
                        }
                    )
            if method == "m2le" and seed == min(s for (q, s) in runs if q == sequence):
                for rec in res["modulation"]:
                    for layer in rec["layers"]:
                        for b, count in enumerate(layer["hist"]):
                            mod.append(
                                {
                                    "sequence": sequence,
                                    "task": rec["task"] + 1,
                                    "layer": layer["layer"],
                                    "bin_low": MODULATION_BINS[b],
                                    "bin_high": MODULATION_BINS[b + 1],
                                    "count": count,
                                    "alpha": rec["alpha"],
                                }
                            )
    tidy = pd.DataFrame(rows)
    metrics: dict[str, Any] = {}

    baselines = [m for m in ("seq", "fixed", "pm", "olora", "ewc") if m in set(tidy.method)]
    scalars = [m for m in ("fixed", "pm") if m in set(tidy.method)]
    for sequence, unit in tidy.groupby("sequence", sort=True):
        wide = {m: g.set_index("seed").sort_index() for m, g in unit.groupby("method")}
        seeds = sorted(wide[next(iter(wide))].index)
        for metric in ("avg_acc", "forgetting", "bwt", "task1_final"):
            for method, g in wide.items():
                vals = g.loc[seeds, metric]
                if vals.notna().all():
                    put_sample(metrics, (metric, sequence, method), vals, seeds, "seed")
        best = lambda names: np.max([wide[m].loc[seeds, "avg_acc"].to_numpy() for m in names], axis=0)
        if "m2le" in wide and baselines:
            put_sample(
                metrics,
                ("m2le_minus_best_peft", sequence),
                wide["m2le"].loc[seeds, "avg_acc"].to_numpy() - best([b for b in baselines + ["him"] if b in wide]),
                seeds,
                "seed",
            )
        if "him" in wide and scalars:
            put_sample(
                metrics,
                ("him_minus_best_scalar", sequence),
                wide["him"].loc[seeds, "avg_acc"].to_numpy() - best(scalars),
                seeds,
                "seed",
            )
        if "him" in wide and "m2le" in wide:
            put_sample(
                metrics,
                ("tsp_gain", sequence),
                wide["m2le"].loc[seeds, "avg_acc"].to_numpy() - wide["him"].loc[seeds, "avg_acc"].to_numpy(),
                seeds,
                "seed",
            )
            put_sample(metrics, ("modulation_sd", sequence), wide["m2le"].loc[seeds, "mod_sd"], seeds, "seed")
    return metrics, tidy, pd.DataFrame(curve), pd.DataFrame(mod)


def claim_intervals(metrics: dict[str, Any], claims: list) -> "pd.DataFrame":
    """The interval each claim is decided on (:func:`repro.claimtables.claim_table`, the checker's own),
    and for the spread of the modulation its claim's rule on every sequence that has one
    (:func:`repro.claimtables.same_rule_table`: the claim on the blocks, the other sequences marked as no
    claim), for Figs. 1 and 2. ``claims``: the paper's claims (:func:`repro.claims.load_claims`)."""
    import pandas as pd

    from repro.claimtables import claim_table, same_rule_table

    spread = next(c for c in claims if c.id == MODULATION_CLAIM)
    paths = [f"modulation_sd.{s}" for s in metrics.get("modulation_sd", {})]
    return pd.concat([claim_table(claims, metrics, [c.id for c in claims if c.id != MODULATION_CLAIM]),
                      same_rule_table(spread, metrics, paths)], ignore_index=True)


def table1(tidy: "pd.DataFrame") -> "pd.DataFrame":
    """Per sequence and method: average accuracy, forgetting and BWT, mean ± sd over seeds.

    A seed without a value (NaN) is left out of its cell; a cell over one seed has no sd and one over none no
    mean: both print as missing (:func:`repro.tablecells.mean_spread_of`)."""
    import pandas as pd

    from repro.tablecells import mean_spread_of

    rows = []
    order = {m: k for k, m in enumerate(ORDER)}
    for (sequence, method), g in sorted(
        tidy.groupby(["sequence", "method"]), key=lambda kv: (kv[0][0], order[kv[0][1]])
    ):
        row = {"sequence": sequence, "method": method, "n_seeds": len(g)}
        for c in ("avg_acc", "forgetting", "bwt"):
            row[c] = mean_spread_of(g[c], "sd", fmt=".3f", sep=" ± ")
        rows.append(row)
    return pd.DataFrame(rows)
