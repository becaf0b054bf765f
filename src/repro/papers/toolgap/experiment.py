"""toolgap's method: model-adaptive necessity, tool-call behaviour, mismatch, probes, trajectories.

Reference: chengez/Tool-Cognition-Action at 79f0dc3 (the paper's public code).

- Necessity (:func:`necessity`): ``r`` answers without the tool, sampled at ``temperature``; an item
  is *unnecessary* for the model when at least ``k`` of them are correct (reference: r = 10, k = 9,
  the released labels), else necessary.
- Behaviour (:func:`evaluate`): one greedy generation with the tool in the prompt, never executed;
  a call is detected by text match (:func:`repro.papers.toolgap.synth.detect_call`).
- Mismatch (:func:`mismatch`): (necessary and not called + unnecessary and called) / items, reported
  split into missed calls and over-calls.
- Probes (:func:`probe_analysis`, with :mod:`repro.probes`): every layer, each of the last
  ``positions`` prompt tokens of the prompt that produced the behaviour; one logistic layer, Adam
  lr 0.01, weight decay 0.01, 100 epochs, 70/30 split; labels cognition = necessary, action =
  called; the cosine between the two probes' directions per site.
- Trajectory (:func:`decompose`): a mismatched item is a cognition-to-action error when the
  necessity probe gets its true label right (missed call: probe says necessary; over-call: probe
  says unnecessary), else a cognition error.

Deviations from the reference, each a choice made before any result
--------------------------------------------------------------------
- Probe features are standardised on the training split (see :mod:`repro.probes`).
- Tool-free replies have a token budget per model kind (:func:`free_token_budget`): a tiny model's
  answers are a few bytes, a prompted model explains before its number ("To solve this, add 7 and
  6: 13"). The budget is chosen from the replies' lengths, and ``generation`` in metrics.json
  reports per model and task the share of replies the budget cut (``truncated_share``) and the
  share cut with no answer kept (``truncated_no_answer_share``); a cut reply is wrong.
- The trajectory split needs the necessity probe's verdict on every mismatched item, so it uses
  out-of-fold predictions (``decomposition_folds``-fold cross-fitting, about 67/33 at 3 folds)
  from the probe at the last prompt token of the layer at ``decomposition_depth`` of the network
  (0.75: round(0.75 L)); the reference reads its 30% test split at a layer it does not state.
- "Late layers" for the cosine claim: the last third of the layers (at least one), last token.
- A probe whose labels are all equal for a model and task (e.g. every item necessary) is not
  trained; its accuracy and cosine are absent, and ``probe_undefined`` names the pair. Without a
  necessity probe (or with fewer items of a label than folds) the pair's mismatched items are
  *undecided*: they count in the mismatch rate but in neither side of the trajectory split.

Floors of the trajectory split (ours; the reference reports none): a necessity probe that always
says "necessary" scores every missed call as a cognition-to-action error, so the share means
something only above what the label distribution alone gives. Per decided mismatched item,
``cognition_to_action_floor`` holds (i) ``permuted``: the share of :data:`FLOOR_PERMUTATIONS` probes,
cross-fitted exactly as the real one (same folds, site and training) with the hidden states shuffled
against the necessity labels (a label permutation: the probe can learn the labels' balance, nothing
of the item), that give the item's label; (ii) ``majority``: 1 when the item's label is the one most of
the pair's items have (a probe that always says it). Both are paired with
``cognition_to_action_per_item`` by item.

Floors of the mismatch rate and of the late-layer cosine (ours):

- Mismatch (:func:`mismatch_floors`). No probe enters the mismatch rate: it compares two labels,
  necessity and the greedy call. A caller that knows nothing of the item (the model's calls shuffled
  across the pair's items: ``permuted``) mismatches at p (1 - c) + (1 - p) c for a necessity share p and
  a call share c, and a constant caller (never, always, or the majority action) at p or 1 - p: both
  can clear "substantial" without any knowing-doing gap (a model that never calls, on items that all need
  the tool, mismatches on every item). Their common bound is the least mismatch a caller with the
  model's own call share can make, calling the needed items first: |p - c| (``call_rate``). Mismatch
  above it is 2 min(missed calls, over-calls) / n: the model errs in both directions, which no
  constant caller does. Per item, paired with ``mismatch_per_item``.
- Cosine (``late_abs_cosine_floor``). Two probes that read nothing have directions at the angle their
  labels' overlap gives (about the correlation of the two labels, as they are fit on the same items)
  plus chance alignment, E|cos| = :func:`repro.probes.random_abs_cosine` (about sqrt(2 / (pi d))) for
  unrelated labels, so "< 0.2" holds for noise probes from d = 17 on (with fewer training items than
  dimensions the directions lie in the items' span, and the level is that of the smaller number;
  both seen on noise: 0.16 at d = 24 and 0.11 at d = 96 with 70 training items). ``permuted``: per (model,
  task), the late-layer |cosine| of cognition and action probes trained as the real ones (same split,
  sites and training) on hidden states shuffled against the items' pair of labels (one shuffle for
  both probes: the labels' overlap is kept, nothing of the item), averaged over
  :data:`FLOOR_PERMUTATIONS` shuffles; ``random``: the closed form at the hidden size. Both are paired
  with ``late_abs_cosine`` by (model, task). Where the two labels overlap (correlation r), probes
  trained as the reference's follow the overlap even when they read the labels off orthogonal axes
  (100 Adam epochs from a small start leave the weights near X'y: |cosine| near 2r / (1 + r^2), the
  floor near r; tests/toolgap/test_method.py), so orthogonality can show only where the labels
  overlap little.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from repro.claims import rate, sample
from repro.papers.toolgap.synth import (TOOLS, Item, arithmetic_items, corpus, detect_call, extract_answer,
                                        is_correct, knowledge_items, plain_prompt)
from repro.probes import ProbeConfig, cosine, cross_fit, random_abs_cosine, train_probes, train_test_split

__all__ = ["build_data", "prompts_for", "necessity", "mismatch", "mismatch_floors", "evaluate", "probe_analysis", "decompose",
           "late_layers", "summarise", "TASKS", "truthfulqa_items", "tiny_train_config", "prompt_style",
           "free_token_budget", "truncated", "generation_diagnostics"]

log = logging.getLogger(__name__)

TASKS = ("arithmetic", "knowledge")
#: Label permutations behind the label-permuted floors of the trajectory split and of the late-layer cosine
#: (one probe site each, trained in one batch).
FLOOR_PERMUTATIONS = 20


# ----------------------------------------------------------------------------------------------
# Data
# ----------------------------------------------------------------------------------------------

def _select(items: list[Item], n: int, rng: np.random.Generator) -> list[Item]:
    """``n`` items spread as evenly as the pools allow over the groups (families or attributes): a
    group whose pool is smaller than its share gives all it has, the rest share the remainder."""
    groups = list(dict.fromkeys(it.group for it in items))
    pools = {g: [it for it in items if it.group == g] for g in groups}
    if n > len(items):
        raise ValueError(f"toolgap: n_items {n} exceeds the {len(items)} items the generator holds")
    take, left, open_ = {g: 0 for g in groups}, n, list(groups)
    while left and open_:
        share = max(1, left // len(open_))
        for g in list(open_):
            k = min(share, len(pools[g]) - take[g], left)
            take[g] += k
            left -= k
            if take[g] == len(pools[g]):
                open_.remove(g)
            if not left:
                break
    out = []
    for g in groups:
        pool = pools[g]
        out += [pool[i] for i in sorted(rng.choice(len(pool), size=take[g], replace=False))]
    return out


def build_data(cfg: dict, *, seed: int) -> dict[str, Any]:
    """Items of both tasks, the evaluation subsets and the tiny models' corpus.

    ``cfg`` holds the preset's ``arithmetic``, ``knowledge``, ``n_items`` and ``corpus_repeats``.
    """
    a, kb = cfg["arithmetic"], cfg["knowledge"]
    arith = arithmetic_items(a["families"], pool_size=a["pool_size"], seen_fraction=a["seen_fraction"],
                             tool_families=a["tool_families"], seed=seed)
    facts = knowledge_items(kb["n_entities"], attributes=kb["attributes"], seen_fraction=kb["seen_fraction"],
                            seed=seed + 1)
    rng = np.random.default_rng(seed + 2)
    evaluation = {"arithmetic": _select(arith, cfg["n_items"], rng), "knowledge": _select(facts, cfg["n_items"], rng)}
    docs = corpus(arith + facts, tool_families=a["tool_families"], tool_attributes=kb["tool_attributes"],
                  repeats=cfg["corpus_repeats"])
    return {"items": {t: [it.to_dict() for it in its] for t, its in evaluation.items()}, "corpus": docs,
            "pool_sizes": {"arithmetic": len(arith), "knowledge": len(facts)}}


def truthfulqa_items(cfg: dict) -> list[dict]:
    """The factual task's items from a user-supplied TruthfulQA CSV (``truthfulqa: {csv, limit}``)."""
    from repro.papers.toolgap.synth import load_truthfulqa

    rows = load_truthfulqa(cfg["csv"], limit=cfg.get("limit"))
    return [{**r, "task": "truthfulqa", "group": "truthfulqa", "seen": False, "answer": r["answers"][0]} for r in rows]


def tiny_train_config(cfg: dict):
    """The :class:`repro.llm.tiny.TinyTrainConfig` of one tiny model (``cfg``: its spec and the preset's ``tiny``)."""
    from repro.llm.tiny import TinyConfig, TinyTrainConfig

    spec, t = cfg["model"], cfg["tiny"]
    shape = TinyConfig(n_layer=spec["n_layer"], n_head=spec["n_head"], d_model=spec["d_model"], context=t["context"])
    return TinyTrainConfig(model=shape, steps=t["steps"], batch_size=t["batch_size"], lr=t["lr"], warmup=t["warmup"],
                           weight_decay=t["weight_decay"])


def prompt_style(spec: dict) -> str:
    """Tiny models see their training format (``plain``); pretrained ones their chat template."""
    return "plain" if spec["kind"] == "tiny" else "chat"


# ----------------------------------------------------------------------------------------------
# Prompts: plain text for the tiny models, the chat template for prompted models
# ----------------------------------------------------------------------------------------------

#: The prompted models' system prompts (fixed; the reference's discourage tool use, as these do).
SYSTEM_FREE = "Answer the question. Reply with the answer only, no explanation."
SYSTEM_TOOL = {
    "truthfulqa": ("You can search the web by replying exactly <call>web_search(QUERY)</call>. Use it only if you "
                   "do not know the answer yourself. Otherwise reply with the answer only."),
    "arithmetic": ("You can use a calculator by replying exactly <call>calc(EXPRESSION)</call>. Use it only if you "
                   "cannot compute the answer correctly yourself. Otherwise reply with the answer only."),
    "knowledge": ("You can look facts up by replying exactly <call>lookup(ENTITY, ATTRIBUTE)</call>. Use it only if "
                  "you do not know the answer yourself. Otherwise reply with the answer only."),
}


def prompts_for(lm, questions: Sequence[str], task: str, style: str, *, tool: bool) -> list[str]:
    """Prompt texts for ``questions``: ``plain`` (the tiny models' training format) or ``chat``
    (the model's own template, with the system prompts above)."""
    if style == "plain":
        return [plain_prompt(q, TOOLS[task] if tool else None) for q in questions]
    if style == "chat":
        system = SYSTEM_TOOL[task] if tool else SYSTEM_FREE
        return [lm.render_chat([{"role": "system", "content": system}, {"role": "user", "content": q}])
                for q in questions]
    raise ValueError(f"toolgap: prompt style {style!r} is neither 'plain' nor 'chat'")


# ----------------------------------------------------------------------------------------------
# Necessity, behaviour, mismatch
# ----------------------------------------------------------------------------------------------

def necessity(n_correct: np.ndarray, *, samples: int, min_correct: int) -> np.ndarray:
    """True where the tool is necessary: fewer than ``min_correct`` of ``samples`` tool-free answers correct."""
    n_correct = np.asarray(n_correct)
    if not 1 <= min_correct <= samples:
        raise ValueError(f"toolgap: unnecessary_min_correct must be in 1..samples ({samples}); got {min_correct}")
    if ((n_correct < 0) | (n_correct > samples)).any():
        raise ValueError(f"toolgap: correct counts must lie in 0..{samples}")
    return n_correct < min_correct


def mismatch(necessary: Sequence[bool], called: Sequence[bool]) -> dict[str, int]:
    """Counts of the four cells, and of the two mismatch directions."""
    nec, call = np.asarray(necessary, dtype=bool), np.asarray(called, dtype=bool)
    if nec.shape != call.shape:
        raise ValueError(f"mismatch: {nec.size} necessity labels but {call.size} behaviours")
    missed, over = int((nec & ~call).sum()), int((~nec & call).sum())
    return {"n": int(nec.size), "missed_call": missed, "over_call": over, "mismatched": missed + over,
            "necessary": int(nec.sum()), "called": int(call.sum())}


def mismatch_floors(necessary: Sequence[bool], called: Sequence[bool]) -> dict[str, np.ndarray]:
    """Per item, the mismatch of callers without a knowing-doing gap, given the model's call share.

    With p the share of items the tool is necessary for and c the share the model calls on:

    - ``permuted``: the model's calls shuffled across the items (a caller with its call share that
      knows nothing of the item): a necessary item is missed with probability 1 - c, an unnecessary one
      over-called with probability c; mean p (1 - c) + (1 - p) c.
    - ``call_rate``: the least a caller with the model's call share can mismatch, calling the necessary
      items first: when c <= p each necessary item is left uncalled with probability (p - c) / p, else
      each unnecessary one called with probability (c - p) / (1 - p); mean |p - c|. Every constant
      caller (never, always, the majority action) sits on it.

    Returns both as arrays in item order (expectations over the shuffle or the choice of items).
    """
    nec, call = np.asarray(necessary, dtype=bool), np.asarray(called, dtype=bool)
    if nec.shape != call.shape or nec.ndim != 1 or not nec.size:
        raise ValueError(f"mismatch_floors: {nec.size} necessity labels but {call.size} behaviours (one of each "
                         f"per item, at least one item)")
    p, c = float(nec.mean()), float(call.mean())
    missed = (p - c) / p if p > c else 0.0  # p > c implies p > 0
    over = (c - p) / (1 - p) if c > p else 0.0  # c > p implies p < 1
    return {"permuted": np.where(nec, 1 - c, c), "call_rate": np.where(nec, missed, over)}


def evaluate(lm, items: Sequence[dict], task: str, style: str, cfg: dict, *, seed: int,
             hidden_layers: Sequence[int] | None = None) -> tuple[list[dict], np.ndarray | None]:
    """One model on one task: necessity from ``samples`` tool-free answers, greedy behaviour with the
    tool, and (if ``hidden_layers``) hidden states of the tool prompt's last ``probe.positions`` tokens.

    Returns the per-item records, the hidden states (items, layers, positions, d) or None, and the
    tool-free replies' :func:`generation_diagnostics`.
    """
    gen = cfg["generation"]
    questions = [it["question"] for it in items]
    free = prompts_for(lm, questions, task, style, tool=False)
    r = cfg["samples"]
    cap = free_token_budget(gen, style)
    replies = lm.generate(free * r, max_new_tokens=cap, temperature=gen["temperature"],
                          top_p=gen["top_p"], seed=seed, stop=["\n"], batch_size=gen["batch_size"])
    answers = [it.get("answers") or it["answer"] for it in items]
    correct = np.array([[is_correct(replies[j * len(items) + i], answers[i], task) for j in range(r)]
                        for i in range(len(items))])  # (items, r)
    cut = truncated(lm, replies, cap)  # (items * r,) or None: the reply ran into the token budget
    nec = necessity(correct.sum(1), samples=r, min_correct=cfg["unnecessary_min_correct"])
    with_tool = prompts_for(lm, questions, task, style, tool=True)
    actions = lm.generate(with_tool, max_new_tokens=gen["max_new_tokens_tool"], temperature=0.0, stop=["\n"],
                          batch_size=gen["batch_size"])
    records = []
    for i, it in enumerate(items):
        called = detect_call(actions[i], TOOLS[task])
        records.append({"id": it["id"], "group": it.get("group", task), "seen": bool(it.get("seen", False)),
                        "n_correct": int(correct[i].sum()), "necessary": bool(nec[i]), "called": bool(called),
                        "mismatched": bool(nec[i] != called), "sample_reply": replies[i], "tool_reply": actions[i],
                        "n_truncated": None if cut is None else int(cut[i::len(items)].sum())})
    hidden = None
    if hidden_layers is not None:
        shortest = min(len(p) for p in with_tool)  # characters bound tokens from above
        n_pos = min(cfg["probe"]["positions"], shortest)
        hidden = lm.hidden_states(with_tool, layers=list(hidden_layers), positions=list(range(-n_pos, 0)),
                                  batch_size=gen["batch_size"]).astype(np.float32)  # (items, layers, positions, d)
    return records, hidden, {"samples": r, **generation_diagnostics(replies, cut, cap, task)}


def free_token_budget(gen: dict, style: str) -> int:
    """The tool-free replies' token budget: ``max_new_tokens`` for the tiny models (plain prompts),
    ``max_new_tokens_prompted`` for prompted models (chat template), whose replies are sentences."""
    return gen["max_new_tokens_prompted"] if style == "chat" else gen["max_new_tokens"]


def truncated(lm, replies: Sequence[str], cap: int) -> np.ndarray | None:
    """Per reply, whether generation ran into the ``cap`` tokens (neither EOS nor the newline stop
    came first): the reply re-encodes to at least ``cap`` tokens. None for a model without a local
    tokenizer (an HTTP backend)."""
    tok = getattr(lm, "tokenizer", None)
    if tok is None:
        return None
    return np.array([len(tok.encode(text, prompt=False)) >= cap for text in replies], dtype=bool)


def generation_diagnostics(replies: Sequence[str], cut: np.ndarray | None, cap: int, task: str) -> dict[str, Any]:
    """How the tool-free replies ended: the budget, and the share cut by it, with and without an answer
    in what was kept (a share well above 0 means necessity is measured on unfinished replies)."""
    has_answer = np.array([extract_answer(t, task) != "" for t in replies], dtype=bool)
    out: dict[str, Any] = {"max_new_tokens": cap, "replies": len(replies),
                           "answer_share": float(has_answer.mean()) if len(replies) else None}
    if cut is None:
        out.update(truncated_share=None, truncated_no_answer_share=None)
    else:
        out.update(truncated_share=float(cut.mean()) if len(replies) else None,
                   truncated_no_answer_share=float((cut & ~has_answer).mean()) if len(replies) else None)
    return out


# ----------------------------------------------------------------------------------------------
# Probes and trajectories
# ----------------------------------------------------------------------------------------------

def late_layers(n_layers: int) -> list[int]:
    """The last third of hidden-state layers 1..n_layers (at least one)."""
    k = max(1, math.ceil(n_layers / 3))
    return list(range(n_layers - k + 1, n_layers + 1))


def decomposition_layer(n_layers: int, depth: float) -> int:
    return min(n_layers, max(1, int(round(depth * n_layers))))


def decompose(necessary: Sequence[bool], called: Sequence[bool], probe_says_necessary: Sequence[bool]) -> dict[str, int]:
    """Split mismatched items into cognition-to-action errors (the necessity probe is right) and
    cognition errors (it is wrong)."""
    nec, call, says = (np.asarray(v, dtype=bool) for v in (necessary, called, probe_says_necessary))
    mis = nec != call
    c2a = mis & (says == nec)
    return {"mismatched": int(mis.sum()), "cognition_to_action": int(c2a.sum()), "cognition": int((mis & ~c2a).sum()),
            "missed_call_c2a": int((c2a & nec).sum()), "over_call_c2a": int((c2a & ~nec).sum())}


def probe_analysis(hidden: np.ndarray, records: Sequence[dict], cfg: dict, *, seed: int) -> dict[str, Any]:
    """Cognition and action probes at every (layer, position) of ``hidden`` (items, L + 1, P, d).

    Returns per-layer accuracies and cosines at the last token (and over positions), the per-item
    test predictions at the decomposition layer, and the trajectory split.
    """
    n, n_states, n_pos, d = hidden.shape
    n_layers = n_states - 1
    pc = ProbeConfig(lr=cfg["lr"], weight_decay=cfg["weight_decay"], epochs=cfg["epochs"],
                     test_fraction=cfg["test_fraction"])
    X = hidden.reshape(n, n_states * n_pos, d)
    labels = {"cognition": np.array([r["necessary"] for r in records], dtype=int),
              "action": np.array([r["called"] for r in records], dtype=int)}
    split = train_test_split(n, pc.test_fraction, seed=seed)
    out: dict[str, Any] = {"n_layers": n_layers, "positions": n_pos, "dim": d, "test_ids": [records[i]["id"] for i in split[1]],
                           "late_layers": late_layers(n_layers),
                           "decomposition_layer": decomposition_layer(n_layers, cfg["decomposition_depth"])}
    fits = {}
    for name, y in labels.items():
        if y.min() == y.max() or y[split[0]].min() == y[split[0]].max():
            out[name] = None  # constant labels: no probe
            continue
        fit = train_probes(X, y, split=split, cfg=pc, seed=seed)
        fits[name] = fit
        acc = fit.test_accuracy.reshape(n_states, n_pos)
        majority = int(y[split[0]].mean() >= 0.5)
        lay = out["decomposition_layer"]
        site = lay * n_pos + n_pos - 1
        out[name] = {"test_accuracy_last": acc[:, -1].tolist(), "test_accuracy_best_position": acc.max(1).tolist(),
                     "train_accuracy_last": fit.train_accuracy.reshape(n_states, n_pos)[:, -1].tolist(),
                     "majority": majority, "majority_accuracy": float((y[split[1]] == majority).mean()),
                     "test_correct": (fit.test_pred[site] == y[split[1]]).astype(int).tolist(),
                     "majority_correct": (y[split[1]] == majority).astype(int).tolist(),
                     "positive_rate": float(y.mean())}
    if len(fits) == 2:
        cos = cosine(fits["cognition"].weight, fits["action"].weight).reshape(n_states, n_pos)
        out["cosine_last"] = cos[:, -1].tolist()
        out["abs_cosine_mean_positions"] = np.abs(cos).mean(1).tolist()
        out["late_abs_cosine"] = float(np.abs(cos[out["late_layers"], -1]).mean())
        # the floor: both probes trained as above on hidden states shuffled against the items' pair of
        # labels, one shuffle per site shared by the two probes (the labels' overlap is kept, nothing of
        # the item), FLOOR_PERMUTATIONS per late layer at the last token, trained in one batch
        rng = np.random.default_rng([seed % 2**63, 7919])  # a stream of its own, fixed by the job's seed
        shuffled = np.stack([rng.permutation(n) for _ in range(FLOOR_PERMUTATIONS)], axis=1)  # (items, perms)
        late_sites = np.array([layer * n_pos + n_pos - 1 for layer in out["late_layers"]])
        Xp = X[shuffled[:, :, None], late_sites[None, None, :]].reshape(n, -1, d)  # (items, perms * late, d)
        fp = {name: train_probes(Xp, labels[name], split=split, cfg=pc, seed=seed) for name in fits}
        cos_p = cosine(fp["cognition"].weight, fp["action"].weight).reshape(FLOOR_PERMUTATIONS, len(late_sites))
        out["late_abs_cosine_permuted"] = np.abs(cos_p).mean(axis=1).tolist()  # one per shuffle
    else:
        out["cosine_last"] = None
        out["late_abs_cosine_permuted"] = None
    # trajectory: out-of-fold necessity verdicts at the decomposition layer, last token
    y = labels["cognition"]
    mis = y.astype(bool) != labels["action"].astype(bool)
    if out["cognition"] is not None and min(y.sum(), n - y.sum()) >= cfg["decomposition_folds"]:
        site = out["decomposition_layer"] * n_pos + n_pos - 1
        says = cross_fit(X[:, site:site + 1], y, folds=cfg["decomposition_folds"], cfg=pc, seed=seed)[0]
        out["probe_says_necessary"] = says.astype(bool).tolist()
        # the floor: the same cross-fit with the hidden states shuffled against the labels, one
        # permutation per site (a label permutation, trained in one batch), scored against the labels
        rng = np.random.default_rng([seed % 2**63, 104729])  # a stream of its own, fixed by the job's seed
        shuffled = np.stack([rng.permutation(n) for _ in range(FLOOR_PERMUTATIONS)], axis=1)  # (items, perms)
        floor = cross_fit(X[shuffled, site], y, folds=cfg["decomposition_folds"], cfg=pc, seed=seed)
        out["permuted_says_true"] = (floor == y[None]).mean(axis=0).tolist()
        out["decomposition"] = {**decompose(y.astype(bool), labels["action"].astype(bool), says.astype(bool)),
                                "undecided": 0}
        out["cross_fit"] = True
    else:
        # too few items of one necessity label to train a probe: the mismatched items stay undecided
        out["probe_says_necessary"] = None
        out["permuted_says_true"] = None
        out["decomposition"] = {"mismatched": int(mis.sum()), "cognition_to_action": 0, "cognition": 0,
                                "missed_call_c2a": 0, "over_call_c2a": 0, "undecided": int(mis.sum())}
        out["cross_fit"] = False
    return out


# ----------------------------------------------------------------------------------------------
# Aggregate
# ----------------------------------------------------------------------------------------------

def summarise(runs: dict[tuple[str, str], dict], losses: dict[str, Sequence[float]] | None = None
              ) -> tuple[dict[str, Any], list[dict], list[dict]]:
    """metrics.json, the per-(model, task) table and the per-layer probe table from every run.

    ``runs[(model, task)]`` holds ``records`` (from :func:`evaluate`), ``probes`` (from
    :func:`probe_analysis`) and ``generation`` (the tool-free replies' diagnostics; reported per pair
    under ``generation``, with the share of replies cut by the token budget). ``losses[model]``: a
    tiny model's training loss per step (nats per byte), reported under ``training`` with the loss at
    the end of training (mean of the last ``END_WINDOW`` steps). The intervals the claims are decided on,
    which the figures draw, are the checker's own on these metrics (:func:`repro.claimtables.claim_table`,
    written by the aggregate beside them).
    """
    mis_rate, mis_items, mis_floor, detail, table, layers = {}, {}, {"call_rate": {}, "permuted": {}}, {}, [], []
    decodable = {"cognition": {}, "action": {}}
    late_vals, late_ids, late_perm, late_random, undefined = [], [], [], [], []
    c2a_total = mis_total = 0
    c2a_vals, c2a_ids, floor_perm, floor_major = [], [], [], []
    generation = {}
    for (model, task), run in sorted(runs.items()):
        key = f"{model}__{task}"
        generation[key] = run.get("generation")
        r_samples = (generation[key] or {}).get("samples")
        recs, pr = run["records"], run["probes"]
        counts = mismatch([r["necessary"] for r in recs], [r["called"] for r in recs])
        mis_rate[key] = rate(counts["mismatched"], counts["n"], "item")
        nec = np.array([r["necessary"] for r in recs], dtype=bool)
        call = np.array([r["called"] for r in recs], dtype=bool)
        item_ids = [r["id"] for r in recs]
        mis_items[key] = sample((nec != call).astype(float), item_ids, "item")
        for name, values in mismatch_floors(nec, call).items():
            mis_floor[name][key] = sample(values, item_ids, "item")
        dec = pr["decomposition"]
        detail[key] = {**counts, "mismatch_rate": counts["mismatched"] / counts["n"],
                       "missed_call_rate": counts["missed_call"] / counts["n"],
                       "over_call_rate": counts["over_call"] / counts["n"], "decomposition": dec,
                       "seen_necessary_rate": _mean([r["necessary"] for r in recs if r["seen"]]),
                       "unseen_necessary_rate": _mean([r["necessary"] for r in recs if not r["seen"]]),
                       # how much of what it was trained on the model answers without the tool
                       "seen_correct_rate": _mean([r["n_correct"] / r_samples for r in recs if r["seen"]])
                       if r_samples else None}
        c2a_total += dec["cognition_to_action"]
        mis_total += dec["cognition_to_action"] + dec["cognition"]  # decided items only
        if pr.get("probe_says_necessary") is not None:  # per decided mismatched item, in item order
            says = np.asarray(pr["probe_says_necessary"], dtype=bool)
            majority = nec.mean() >= 0.5
            perm = pr.get("permuted_says_true")
            for i in np.flatnonzero(nec != call):
                c2a_vals.append(float(says[i] == nec[i]))
                c2a_ids.append(f"{key}:{recs[i]['id']}")
                floor_major.append(float(nec[i] == majority))
                floor_perm.append(None if perm is None else float(perm[i]))
        for name in ("cognition", "action"):
            p = pr.get(name)
            if p is None:
                undefined.append(f"{key}:{name}")
                continue
            ids = [f"{i}" for i in pr["test_ids"]]
            decodable[name][key] = {"probe": sample(p["test_correct"], ids, "item"),
                                    "majority": sample(p["majority_correct"], ids, "item")}
        if pr.get("cosine_last") is not None:
            late_vals.append(pr["late_abs_cosine"])
            late_ids.append(key)
            perm = pr.get("late_abs_cosine_permuted")
            late_perm.append(None if perm is None else float(np.mean(perm)))
            late_random.append(random_abs_cosine(pr["dim"]))
        table.append({"model": model, "task": task, "n": counts["n"], "necessary": counts["necessary"],
                      "called": counts["called"], "mismatch_rate": counts["mismatched"] / counts["n"],
                      "missed_call": counts["missed_call"], "over_call": counts["over_call"],
                      "mismatched": dec["mismatched"], "cognition_to_action": dec["cognition_to_action"],
                      "cognition": dec["cognition"], "undecided": dec["undecided"],
                      "c2a_share": (dec["cognition_to_action"] / (dec["mismatched"] - dec["undecided"])
                                    if dec["mismatched"] > dec["undecided"] else float("nan")),
                      "probe_cross_fit": pr["cross_fit"]})
        for layer in range(pr["n_layers"] + 1):
            row = {"model": model, "task": task, "layer": layer, "depth": layer / pr["n_layers"]}
            for name in ("cognition", "action"):
                p = pr.get(name)
                row[f"{name}_accuracy"] = p["test_accuracy_last"][layer] if p else float("nan")
                row[f"{name}_majority"] = p["majority_accuracy"] if p else float("nan")
            row["cosine"] = pr["cosine_last"][layer] if pr.get("cosine_last") else float("nan")
            layers.append(row)
    metrics = {
        "mismatch": mis_rate,
        "mismatch_per_item": mis_items,
        "mismatch_floor": mis_floor,
        "mismatch_detail": detail,
        "decodable": {name: {k: v["probe"] for k, v in d.items()} for name, d in decodable.items()},
        "majority_baseline": {name: {k: v["majority"] for k, v in d.items()} for name, d in decodable.items()},
        "late_abs_cosine": sample(late_vals, late_ids, "model_task") if late_vals else None,
        "late_abs_cosine_floor": {
            # probe files from before the floor have no permuted probes: the floor is then absent
            "permuted": sample(late_perm, late_ids, "model_task")
            if late_vals and all(v is not None for v in late_perm) else None,
            "random": sample(late_random, late_ids, "model_task") if late_vals else None},
        "cognition_to_action_share": rate(c2a_total, mis_total, "model_item") if mis_total else None,
        "cognition_to_action_per_item": sample(c2a_vals, c2a_ids, "model_item") if c2a_vals else None,
        "cognition_to_action_floor": {
            "majority": sample(floor_major, c2a_ids, "model_item") if c2a_vals else None,
            # probe files from before the floor have no permuted probes: the floor is then absent
            "permuted": sample(floor_perm, c2a_ids, "model_item")
            if c2a_vals and all(v is not None for v in floor_perm) else None},
        "probe_undefined": undefined,
        "generation": generation,
        "training": {m: training_summary(v) for m, v in sorted((losses or {}).items())},
    }
    return metrics, table, layers


#: Steps averaged for the loss at the end of training (one step's loss is a noisy batch of 16 windows).
END_WINDOW = 50


def training_summary(loss: Sequence[float]) -> dict[str, Any]:
    """A tiny model's training loss (nats per byte): steps, at the start, and at the end (mean of the
    last ``END_WINDOW`` steps, and of the ``END_WINDOW`` before them, to show whether it still falls)."""
    loss = np.asarray(loss, dtype=float)
    if loss.size == 0:
        raise ValueError("toolgap: a training loss file holds no steps")
    w = min(END_WINDOW, loss.size)
    prev = loss[-2 * w:-w] if loss.size >= 2 * w else loss[:0]
    return {"steps": int(loss.size), "first_loss": float(loss[0]), "final_loss": float(loss[-w:].mean()),
            "final_loss_previous_window": float(prev.mean()) if prev.size else None}


def _mean(values: Sequence[bool]) -> float | None:
    return float(np.mean(values)) if len(values) else None
