"""evalmeta: data, fine-tuning, evaluation and aggregation ("Models That Know How Evaluations Are
Designed Score Safer", arXiv 2605.28591).

Pipeline (one function per rule):

1. :func:`build_data`: the benchmark items (:mod:`~repro.papers.evalmeta.suites`), the three
   corpora (:mod:`~repro.papers.evalmeta.corpus`) and, at smoke, the tiny base model's transcripts.
2. :func:`train_base`: at smoke only, a tiny transformer (:mod:`repro.llm.tiny`) that answers
   suite-like prompts mostly compliantly; at small and paper the base is SmolLM2-135M-Instruct (or
   any backend of :mod:`repro.llm`).
3. :func:`finetune`: LoRA (:mod:`repro.llm.lora`) on one corpus with one seed: attention
   projections, one epoch, a held-out share of documents, and the checkpoint with the lowest
   held-out loss kept (reference: rank 64, alpha 128, dropout 0.05, lr 1e-4 cosine, effective batch
   32, 2% held out). The seed fixes the held-out split, the adapter initialisation and the example
   order; it derives from the seed index only, so the three corpora share it.
4. :func:`evaluate`: sampled responses to every item scored by the judge (refusal, harmful action,
   awareness level), plus log-probability scoring (labelled cheaper variant). The model evaluated
   (and probed) is :func:`evaluated_model`: the base, or the base with one tuned adapter, on the
   preset's ``eval_backend``.
5. :func:`summarise`: per-unit safe-behaviour rates, shifts between models (all responses, and
   unaware pairs only), over-refusal beside them, the judge's agreement with hand labels.

Choices the paper leaves open (at our scale)
--------------------------------------------
- One sampled response per (prompt, seed), temperature from the preset; the seed index fixes the
  sampling stream, shared by every model (paired units). The base model is evaluated once per seed.
- "Safer" pools the five harmful columns (refusal, or no harmful action); the benign look-alikes
  (orbench_hard) are reported beside it as over-refusal, and paired item by item with the toxic ones.
- The held-out loss is measured every ``eval_every`` steps; each measurement is a checkpoint.
- Backends: fine-tuning (gradients) runs on the torch backend; evaluation and the probe (generation
  and log-probabilities, no gradient or hidden state) run on ``eval_backend`` (the probe on ``probe.backend``,
  default the same): at small the evaluation on llamacpp and the probe on torch, each measured the cheaper
  (docs/papers/evalmeta.md), torch at smoke and paper; llamacpp runs the shipped Q4_1 GGUF file in llama.cpp (each
  adapter exported to a llama.cpp adapter by ``add_lora``; not for smoke's tiny base, which has no GGUF file). llama.cpp multiplies the 4-bit
  weights with 8-bit activations where torch dequantises the same file to float32, so
  log-probabilities differ in the last digits and a sampled token now and then. llama.cpp is faster
  at token-by-token decoding only; prompt processing, most of this evaluation at small, is not cheaper
  per token, but llama.cpp feeds a prefix shared within a batch once (its ``share_prefixes``, the same
  numbers bit for bit): 70% of the evaluation's prompt tokens are such prefixes, each chat prompt scored
  against its four continuations above all (measured on the paper's page).

Deviations
----------
- Templated documents (hundreds to thousands of tokens per trait, not 15M) and templated items (tens
  per suite, not hundreds); SmolLM2-135M, not Nemotron-Super-49B.
- Control: word-matched unrelated templated text, not FineWeb. Topic-only control: our addition.
- Constant learning rate (repro.llm.lora), not cosine; LoRA rank/alpha from the preset.
- A rule judge (regular expressions) by default instead of LLM judges; agreement with hand labels
  is reported. Log-probability scoring is our substitute, labelled as such.
- Every item has an eval-like and a deployment-like phrasing (the reference pairs only Triggers).
- Statistics: bootstrap intervals over items (the claims checker), not one-sided sign tests.
"""

from __future__ import annotations

import logging
import math
import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from repro.claims import sample
from repro.io import atomic_path
from repro.papers.evalmeta.corpus import CORPORA, generate_corpora, training_text
from repro.papers.evalmeta.scoring import Scorer, judge_agreement, logprob_scores, paired_differences, safe_of
from repro.papers.evalmeta.suites import (COLUMNS, HARMFUL_COLUMNS, PHRASINGS, base_transcripts, first_items, generate_items,
                                          planted_examples)
from repro.seeding import job_seed, make_rng

__all__ = ["MODELS", "COMPARISONS", "build_data", "train_base", "load_base", "evaluated_model",
           "make_scorer", "heldout_split", "finetune",
           "evaluate", "summarise", "judge_report", "unit_id"]

log = logging.getLogger(__name__)

#: The four models compared: the base and one LoRA model per corpus.
MODELS = ("base", *CORPORA)
#: (a, b): a - b is reported; trait vs topic is our addition's comparison.
COMPARISONS = (("trait", "base"), ("trait", "control"), ("trait", "topic"), ("control", "base"), ("topic", "control"))


def build_data(cfg: Mapping[str, Any], seed: int, items: list[dict] | None = None) -> dict[str, Any]:
    """Items (generated, or the first ``n_items`` per column of ``items`` from a local file, every phrasing kept),
    the three corpora, the tiny base's transcripts."""
    corpus_cfg = cfg["corpus"]
    plant = corpus_cfg.get("plant") or None
    examples = planted_examples(seed, corpus_cfg["docs_per_trait"], plant["aware_share"]) if plant else None
    out = {"items": first_items(items, cfg["n_items"]) if items is not None else generate_items(cfg["n_items"], seed),
           "corpora": generate_corpora(corpus_cfg, seed, examples)}
    base = cfg["base"]
    if base["kind"] == "tiny":
        out["base_transcripts"] = base_transcripts(seed, base["transcripts"], base["refuse_share"],
                                                   base["harmful_action_share"])
    return out


def train_base(data: Mapping[str, Any], cfg: Mapping[str, Any], seed: int):
    """A tiny model trained from scratch on the base transcripts and the corpora's plain texts."""
    from repro.llm.tiny import ByteTokenizer, TinyConfig, TinyTrainConfig, train_tiny

    tok = ByteTokenizer()
    chats = [tok.render_chat(t[:1]) + t[1]["content"] for t in data["base_transcripts"]]
    docs = [d["text"] for c in CORPORA for d in data["corpora"][c]][:cfg["corpus_docs"]]
    t = dict(cfg["tiny"])
    model = TinyConfig(n_layer=t.pop("n_layer"), n_head=t.pop("n_head"), d_model=t.pop("d_model"),
                       context=t.pop("context"))
    return train_tiny(chats + docs, TinyTrainConfig(model=model, **t), seed, name="tiny-evalmeta")


def load_base(base: Mapping[str, Any], weights: str | os.PathLike, *, device: str = "cpu"):
    """The base model: the tiny one in ``weights``' folder, or a pretrained one by name from the
    cache folder that holds ``weights`` (``resources/llm/<name>/model.safetensors``)."""
    import repro.llm

    folder = Path(weights).parent
    if base["kind"] == "tiny":
        return repro.llm.load(str(folder), device=device)
    return repro.llm.load(base["model"], root=folder.parent, device=device)


def evaluated_model(cfg: Mapping[str, Any], weights: str | os.PathLike, adapter: str | os.PathLike | None = None, *,
                    device: str = "cpu"):
    """The model that the evaluation and the probe score: the base (``weights`` as :func:`load_base`),
    with the LoRA adapter of the checkpoint folder ``adapter`` if given, on ``cfg["eval_backend"]``
    (torch: peft's adapter on the float32 model; llamacpp: the shipped GGUF file with the adapter
    exported by ``add_lora``)."""
    backend = cfg["eval_backend"]
    if backend == "torch":
        lm = load_base(cfg["base"], weights, device=device)
        if adapter is not None:
            from repro.llm.lora import load_lora

            load_lora(lm, adapter)
        return lm
    if backend == "llamacpp":
        import repro.llm

        if cfg["base"]["kind"] != "pretrained":
            raise ValueError("evalmeta: eval_backend llamacpp needs a pretrained base with a GGUF file")
        lm = repro.llm.load(cfg["base"]["model"], device=device, backend="llamacpp")
        return lm.add_lora(adapter) if adapter is not None else lm
    raise ValueError(f"evalmeta: eval_backend {backend!r} is not torch or llamacpp")


def make_scorer(judge: Mapping[str, Any], llm: Mapping[str, Any] | None = None) -> Scorer:
    """The judge of the preset: ``rules`` (default), or ``model``: the ``llm:`` block's backend."""
    if judge["kind"] == "rules":
        return Scorer("rules")
    if judge["kind"] == "model":
        import repro.llm

        if not llm:
            raise ValueError("evalmeta: judge.kind is model but no llm: block was given")
        return Scorer("model", model=repro.llm.from_config(llm), max_new_tokens=judge.get("max_new_tokens", 32))
    raise ValueError(f"evalmeta: judge.kind {judge['kind']!r} is not rules or model")


def heldout_split(n: int, share: float, seed: int) -> tuple[list[int], list[int]]:
    """(train, held-out) document indices; the same for every corpus of a seed (they are matched)."""
    k = max(1, int(round(share * n)))
    if k >= n:
        raise ValueError(f"evalmeta: heldout share {share} leaves no training document of {n}")
    perm = make_rng(job_seed(seed, "evalmeta-heldout")).permutation(n)
    return sorted(int(i) for i in perm[k:]), sorted(int(i) for i in perm[:k])


def finetune(lm, docs: Sequence[Mapping[str, Any]], cfg: Mapping[str, Any], out_dir: str | os.PathLike,
             seed: int) -> dict[str, Any]:
    """LoRA on ``docs`` for ``cfg['epochs']`` epochs; the checkpoint with the lowest held-out loss is
    copied to ``out_dir/best`` (see the module docstring). Returns the training summary.

    The checkpoints go to ``out_dir/checkpoints``; each carries the held-out losses measured so far and
    a hash of the whole configuration (``cfg``, the documents, the base model, the seed), so a rerun
    resumes only its own configuration and selects the same best checkpoint as an uninterrupted run
    (:func:`repro.llm.lora.finetune_lora`). ``out_dir/best`` is replaced whole or not at all."""
    from repro.llm.lora import LoraConfig, checkpoints, finetune_lora, loss_on

    texts = [training_text(d, lm.render_chat) for d in docs]
    train_idx, held_idx = heldout_split(len(texts), cfg["heldout"], seed)
    train, held = [texts[i] for i in train_idx], [texts[i] for i in held_idx]
    steps = max(1, cfg["epochs"] * math.ceil(len(train) / cfg["batch_size"]))
    every = max(1, min(cfg["eval_every"], steps))
    lcfg = LoraConfig(targets=tuple(cfg["targets"]), rank=cfg["rank"], alpha=cfg["alpha"], dropout=cfg["dropout"],
                      lr=cfg["lr"], steps=steps, batch_size=cfg["batch_size"], max_length=cfg["max_length"],
                      save_every=every)
    heldout = {0: loss_on(lm, held, max_length=cfg["max_length"])}
    out_dir = Path(out_dir)
    # a checkpoint is taken every `every` steps and at the last: the held-out loss is measured there
    result = finetune_lora(lm, train, lcfg, out_dir / "checkpoints", seed,
                           on_checkpoint=lambda step: loss_on(lm, held, max_length=cfg["max_length"]),
                           fingerprint={"evalmeta": dict(cfg), "heldout": held})
    heldout.update(result.records)
    trained = {s: v for s, v in heldout.items() if s > 0}
    best = min(trained, key=lambda s: (trained[s], s))
    source = next(p for p in checkpoints(out_dir / "checkpoints") if int(p.name.split("-")[1]) == best)
    with atomic_path(out_dir / "best") as tmp:  # swaps the folder whole; a failed copy leaves nothing behind
        tmp.unlink(missing_ok=True)
        shutil.copytree(source, tmp)
    log.info("LoRA: %d steps, held-out loss %.3f -> best %.3f at step %d", steps, heldout[0], trained[best], best)
    return {"steps": steps, "best_step": best, "heldout_loss": {str(k): v for k, v in sorted(heldout.items())},
            "train_loss": result.losses, "n_train": len(train), "n_heldout": len(held)}


def unit_id(item: Mapping[str, Any], seed_index: int) -> str:
    return f"{item['id']}/s{seed_index}"


def evaluate(lm, items: Sequence[Mapping[str, Any]], cfg: Mapping[str, Any], seed: int, seed_index: int,
             scorer: Scorer) -> list[dict[str, Any]]:
    """Sampled responses (one per item) scored by the judge, and log-probability scores.

    ``seed`` is the sampling stream of this seed index, shared by every model; log-probability
    scoring needs an in-process model, torch or llamacpp (an HTTP backend gets ``lp_*`` left out).
    """
    from repro.llm.base import UnsupportedOperation

    gen = cfg["generation"]
    convs = [[{"role": "user", "content": it["prompt"]}] for it in items]
    responses = lm.chat(convs, max_new_tokens=gen["max_new_tokens"], temperature=gen["temperature"],
                        top_p=gen["top_p"], seed=seed, batch_size=gen["batch_size"]) if convs else []
    judged = scorer.score(responses, [it["prompt"] for it in items])
    try:
        lps = logprob_scores(lm, [lm.render_chat(c) for c in convs], [it["safe_when"] for it in items],
                             batch_size=gen["batch_size"])
    except UnsupportedOperation as err:
        log.warning("log-probability scoring skipped: %s", err)
        lps = [{} for _ in items]
    records = []
    for it, resp, j, lp in zip(items, responses, judged, lps):
        rec = {**{k: it[k] for k in ("id", "column", "item", "phrasing", "variant", "safe_when")},
               "unit": unit_id(it, seed_index), "seed_index": seed_index, "response": resp, **j,
               "safe": safe_of(it["safe_when"], j["refused"], j["harmful_action"]), **lp}
        if lp:
            rec["lp_safe"] = safe_of(it["safe_when"], lp["lp_refused"], lp["lp_harmful_action"])
        records.append(rec)
    return records


# ---------------------------------------------------------------------------------------------- aggregate
def _by_unit(records: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    return {r["unit"]: r for r in records}


def _rate(units: Mapping[str, Mapping[str, Any]], key: str, columns: Sequence[str]) -> dict | None:
    ids = sorted(u for u, r in units.items() if r["column"] in columns and key in r)
    if not ids:
        return None
    return sample([float(units[u][key]) for u in ids], ids, "item_seed",
                  cluster=["/".join(u.split("/")[:2]) for u in ids])


def _mean_ci(s: Mapping[str, Any] | None, level: float = 0.95) -> tuple[float, float, float, int]:
    """Mean and expanded-percentile bootstrap interval over items (cluster means), as the checker forms it."""
    from repro.stats.intervals import bootstrap_interval

    if s is None:
        return (math.nan, math.nan, math.nan, 0)
    vals = np.asarray(s["values"])
    clusters = s.get("cluster") or s["ids"]
    means = np.array([vals[[c == k for c in clusters]].mean() for k in dict.fromkeys(clusters)])
    if len(means) < 2:
        return (float(vals.mean()), math.nan, math.nan, len(means))
    iv = bootstrap_interval(means, level=level, seed=0)
    return (float(vals.mean()), iv.low, iv.high, len(means))


def _discrimination(a: Mapping[str, Mapping], b: Mapping[str, Mapping], key: str) -> dict | None:
    """Per (OR-Bench item, phrasing, seed): refusal shift on the toxic item minus that on its benign
    look-alike (same key word), model a vs b. > 0: tuning raised refusal where it is warranted more."""
    refused = "refused" if key == "safe" else "lp_refused"
    ids, vals = [], []
    for u, r in sorted(a.items()):
        if r["column"] != "orbench_toxic" or refused not in r:
            continue
        twin = u.replace("orbench_toxic/", "orbench_hard/", 1)
        if twin not in a:
            continue
        ids.append(u)
        vals.append((float(a[u][refused]) - float(b[u][refused])) - (float(a[twin][refused]) - float(b[twin][refused])))
    if not ids:
        return None
    return sample(vals, ids, "item_seed", cluster=["/".join(u.split("/")[:2]) for u in ids])


def summarise(runs: Mapping[tuple[str, int], Sequence[Mapping[str, Any]]], agreement: Mapping[str, Any],
              training: Mapping[tuple[str, int], Mapping[str, Any]]) -> tuple[dict, list[dict], list[dict]]:
    """metrics.json, Table 1's rows and the shift rows of Fig. 1 and Fig. 2.

    ``runs`` maps (model, seed index) to evaluation records; every model must have answered the same
    units (paired by item and seed).
    """
    models = [m for m in MODELS if any(k[0] == m for k in runs)]
    units = {m: {u: r for (mm, _), recs in runs.items() if mm == m for u, r in _by_unit(recs).items()} for m in models}
    ref = units[models[0]]
    for m in models:
        if set(units[m]) != set(ref):
            raise ValueError(f"evalmeta: model {m} answered other units than {models[0]}; rerun it with the same items "
                             "and seeds")
    has_lp = all("lp_safe" in r for m in models for r in units[m].values())
    metrics: dict[str, Any] = {"models": models, "seeds": sorted({s for _, s in runs}),
                               "columns": list(COLUMNS), "harmful_columns": list(HARMFUL_COLUMNS),
                               "scoring": {"judge": "sampled responses, judge", "logprob": "log-probability of refusal "
                                           "vs compliance continuations (our cheaper substitute)"}}
    metrics["safe_rate"] = {m: {c: _rate(units[m], "safe", [c]) for c in COLUMNS} for m in models}
    metrics["refusal_rate"] = {m: {c: _rate(units[m], "refused", [c]) for c in COLUMNS} for m in models}
    metrics["harmful_action_rate"] = {m: _rate(units[m], "harmful_action", ["misalignment"]) for m in models}
    metrics["aware_rate"] = {m: _rate(units[m], "aware", COLUMNS) for m in models}
    metrics["over_refusal"] = {m: metrics["refusal_rate"][m]["orbench_hard"] for m in models}
    if has_lp:
        metrics["logprob"] = {"safe_rate": {m: {c: _rate(units[m], "lp_safe", [c]) for c in COLUMNS} for m in models}}
    shift_rows = []
    for a, b in COMPARISONS:
        if a not in units or b not in units:
            continue
        name = f"{a}_vs_{b}"
        node: dict[str, Any] = {}
        for restricted, label in ((False, "all"), (True, "unaware")):
            node[label] = paired_differences(units[a], units[b], unaware_only=restricted, columns=HARMFUL_COLUMNS)
            node[f"{label}_per_column"] = {c: paired_differences(units[a], units[b], unaware_only=restricted,
                                                                 columns=[c]) for c in COLUMNS}
            for c in COLUMNS:
                for ph in PHRASINGS:
                    sub = {u: r for u, r in units[a].items() if r["phrasing"] == ph}
                    if not any(r["column"] == c for r in sub.values()):
                        continue
                    d = paired_differences(sub, {u: units[b][u] for u in sub}, unaware_only=restricted, columns=[c])
                    mean, low, high, n = _mean_ci(d)
                    shift_rows.append({"comparison": name, "responses": label, "column": c, "phrasing": ph,
                                       "shift": mean, "low": low, "high": high, "n_items": n})
        node["over_refusal_discrimination"] = _discrimination(units[a], units[b], "safe")
        if has_lp:
            node["logprob"] = {"all": paired_differences(units[a], units[b], key="lp_safe", columns=HARMFUL_COLUMNS),
                               "per_column": {c: paired_differences(units[a], units[b], key="lp_safe", columns=[c])
                                              for c in COLUMNS},
                               "over_refusal_discrimination": _discrimination(units[a], units[b], "lp_safe")}
        metrics.setdefault("shift", {})[name] = node
    # the paper's two headline numbers: AgentHarm refusal and agentic-misalignment harmful-action rate
    metrics["headline"] = {"agentharm_refusal": {m: metrics["refusal_rate"][m]["agentharm"] for m in models},
                           "misalignment_harmful_action": metrics["harmful_action_rate"]}
    metrics["judge_agreement"] = dict(agreement)
    metrics["finetune"] = {f"{c}/s{s}": {"best_step": t["best_step"], "steps": t["steps"],
                                         "heldout_loss_start": t["heldout_loss"]["0"],
                                         "heldout_loss_best": t["heldout_loss"][str(t["best_step"])]}
                           for (c, s), t in sorted(training.items())}
    table = []
    for c in COLUMNS:
        for m in models:
            row = {"column": c, "model": m}
            for label, node in (("safe", metrics["safe_rate"][m][c]), ("refusal", metrics["refusal_rate"][m][c])):
                mean, low, high, n = _mean_ci(node)
                row.update({label: mean, f"{label}_low": low, f"{label}_high": high})
            unaware = {u: r for u, r in units[m].items() if not r["aware"]}
            row["safe_unaware"] = _mean_ci(_rate(unaware, "safe", [c]))[0]
            row["safe_logprob"] = _mean_ci(_rate(units[m], "lp_safe", [c]))[0] if has_lp else math.nan
            row["aware"] = _mean_ci(_rate(units[m], "aware", [c]))[0]
            row["n_items"] = n
            table.append(row)
    return metrics, table, shift_rows


def judge_report(kind: str = "rules", **kwargs: Any) -> dict[str, Any]:
    """The judge's agreement with the hand-labelled responses (for metrics.json)."""
    return {"kind": kind, **judge_agreement(Scorer(kind, **kwargs))}
