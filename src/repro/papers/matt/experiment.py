"""matt's experiment: source model, target embeddings per method, training, evaluation, recovery.

Two protocols share the source model, the items and the evaluation:

- the paper's comparison (:mod:`.matched`, the claims' arm): MATT (FOCUS, then AIM only) against FOCUS
  followed by next-token training of the new rows, the two matched on CPU time of the training loop
  and evaluated straight after, as the paper matches GPU time and evaluates without further training;
- the token-budget variant (:func:`run_method`, below): methods ``mean`` (floor), ``fvt``, ``focus``
  (heuristic initialisations, then next-token training) and ``matt`` (FOCUS, a few AIM steps, then
  next-token training: MATT as a warm-up before language modelling), every method trained to the same
  budgets of target tokens (AIM's student tokens count against MATT's), with the same seed, so the same
  batches of the training stream; CPU-seconds are recorded at every checkpoint.

Next-token training updates the new embedding rows only (tied input/output rows)
(:mod:`repro.methods.tokenizer_transfer.ntp`), as the paper's baseline does (its other weights frozen).

Recovery = target quality / source quality on the same items: multiple-choice accuracy, greedy
completion accuracy, and bits per character (source bpc / target bpc, lower is better).

The claims that read the token-budget variant compare scores at its last budget, paired by item
(:data:`FIG1_CLAIMS`); :func:`comparisons` gives each with the interval its verdict is decided on,
which Fig. 1 draws beneath the recovery curves.
"""

from __future__ import annotations

import math
import time

import numpy as np
import torch
from torch.nn import functional as F

from repro.methods.tokenizer_transfer import aim, init
from repro.methods.tokenizer_transfer.ntp import NextTokenTrainer
from repro.papers.matt import tokens
from repro.seeding import torch_generator

__all__ = [
    "METHODS",
    "train_source",
    "Source",
    "initial_rows",
    "aim_rows",
    "lm_documents",
    "run_method",
    "evaluate",
    "recovery",
    "summarise",
    "comparisons",
    "FIG1_CLAIMS",
    "COMPARISON_COLUMNS",
]

METHODS = ("mean", "fvt", "focus", "matt")


class Source:
    """Source network + tokenizer, and the target tokenizer."""

    def __init__(self, net, src_tok, tgt_tok) -> None:
        self.net, self.src_tok, self.tgt_tok = net, src_tok, tgt_tok
        self.bos = (
            src_tok.token_to_id(tokens.BOS)
            if src_tok.token_to_id(tokens.BOS) is not None
            else src_tok.token_to_id("<|im_start|>")
        )
        self.W_src = net.source_embeddings.detach()
        self.new_ids = tokens.new_token_ids(src_tok, tgt_tok)
        if self.new_ids != list(range(len(self.W_src), len(self.W_src) + len(self.new_ids))):
            raise ValueError("the target tokenizer's new ids must follow the source vocabulary")


def windows(docs: list[list[int]], context: int, batch: int, gen: torch.Generator) -> torch.Tensor:
    rows = []
    for _ in range(batch):
        seq: list[int] = []
        while len(seq) < context + 1:
            seq += docs[int(torch.randint(len(docs), (1,), generator=gen))]
        rows.append(seq[: context + 1])
    return torch.tensor(rows)


def train_source(texts: list[str], tok, model_cfg: dict, steps: int, batch_size: int, lr: float, seed: int):
    """A tiny GPT (repro.llm.tiny's layout) trained from scratch on ``texts`` tokenised by ``tok``."""
    from repro.llm.tiny import TinyConfig, TinyGPT

    cfg = TinyConfig(vocab_size=tok.get_vocab_size(), **model_cfg)
    gen = torch_generator(seed)
    model = TinyGPT(cfg)
    model.init_weights(gen)
    bos, eos = tok.token_to_id(tokens.BOS), tok.token_to_id(tokens.EOS)
    docs = [[bos, *tok.encode(t, add_special_tokens=False).ids, eos] for t in texts]
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01, betas=(0.9, 0.95))
    pos = torch.arange(cfg.context).expand(batch_size, -1)
    mask = torch.ones_like(pos)
    losses = []
    for step in range(steps):
        batch = windows(docs, cfg.context, batch_size, gen)
        for g in opt.param_groups:
            g["lr"] = lr * min(1.0, (step + 1) / 20) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * step / steps)))
        logits, _ = model(batch[:, :-1], mask, pos)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
    return model.eval(), losses


def _fit(text: str, tok, limit: int) -> str:
    """The longest word-prefix of ``text`` whose tokenisation has at most ``limit`` tokens."""
    words = text.split(" ")
    while len(tok.encode(" ".join(words), add_special_tokens=False).ids) > limit and len(words) > 1:
        words = words[:-1]
    return " ".join(words)


def initial_rows(src: Source, method: str, aux_texts: list[str], aux_dim: int) -> np.ndarray:
    """The new rows before training: mean, fvt, or focus (matt starts from focus)."""
    E = src.W_src.numpy().astype(np.float64)
    if method == "mean":
        return init.mean_init(E, len(src.new_ids))
    if method == "fvt":
        pieces = [src.src_tok.encode(src.tgt_tok.decode([i]), add_special_tokens=False).ids for i in src.new_ids]
        return init.fvt_init(E, pieces)
    if method in ("focus", "matt"):
        seqs = [src.tgt_tok.encode(t, add_special_tokens=False).ids for t in aux_texts]
        aux, seen = init.auxiliary_embeddings(seqs, src.tgt_tok.get_vocab_size(), aux_dim)
        return init.focus_init(E, src.new_ids, list(range(len(E))), aux, seen)
    raise ValueError(f"unknown method {method!r}; known: {', '.join(METHODS)}")


def aim_rows(src: Source, texts: list[str], context: int) -> list[aim.AimRow]:
    rows = []
    for text in texts:
        text = _fit(text, src.src_tok, context - 1)
        s = src.src_tok.encode(text, add_special_tokens=False).ids
        t = src.tgt_tok.encode(text, add_special_tokens=False).ids
        segs = tokens.align_segments(tokens.byte_ends(src.src_tok, s), tokens.byte_ends(src.tgt_tok, t))
        rows.append(aim.AimRow([src.bos, *s], [src.bos, *t], segs))
    return rows


def _padded(seqs: list[list[int]]) -> torch.Tensor:
    T = max(map(len, seqs))
    return torch.tensor([s + [0] * (T - len(s)) for s in seqs])


@torch.no_grad()
def evaluate(net, W: torch.Tensor, tok, bos: int, data: dict, context: int, max_new: int) -> dict:
    """Per-item scores of one model: mc (0/1), gen (0/1), bpc (per held-out document)."""

    def enc(text):
        return tok.encode(text, add_special_tokens=False).ids

    mc = []
    for item in data["mc"]:
        ctx = [bos, *enc(item["context"])]
        seqs = [ctx + enc(c) for c in item["choices"]]
        logp = net.logits(_padded(seqs), W).log_softmax(-1)
        scores = [float(sum(logp[r, p - 1, s[p]] for p in range(len(ctx), len(s)))) for r, s in enumerate(seqs)]
        mc.append(float(int(np.argmax(scores)) == item["answer"]))
    gen = []
    for item in data["gen"]:
        ids = [bos, *enc(item["prompt"])]
        start = len(ids)
        for _ in range(max_new):
            ids.append(int(net.logits(torch.tensor([ids[-context:]]), W)[0, -1].argmax()))
        text = tok.decode(ids[start:])
        gen.append(float(text.startswith(item["answer"])))
    bpc = []
    for text in data["heldout"]:
        ids = [bos, *enc(text)]
        logp = net.logits(torch.tensor([ids]), W).log_softmax(-1)[0]
        nll = -float(logp[torch.arange(len(ids) - 1), torch.tensor(ids[1:])].sum())
        bpc.append(nll / math.log(2) / len(text))
    return {"mc": mc, "gen": gen, "bpc": bpc}


def heldout_texts(src: Source, docs: list[str], context: int) -> list[str]:
    """Held-out documents cut at a word boundary so that the source tokenisation (the longer) fits."""
    return [_fit(d, src.src_tok, context - 1) for d in docs]


def lm_documents(src: Source, texts: list[str]) -> list[list[int]]:
    """Next-token training documents: BOS, the target tokenisation of each text, EOS (where the
    target tokenizer has one); :func:`windows` cuts training windows from their concatenation."""
    eos = src.tgt_tok.token_to_id(tokens.EOS)
    tail = [eos] if eos is not None else []
    return [[src.bos, *src.tgt_tok.encode(t, add_special_tokens=False).ids, *tail] for t in texts]


def run_method(src: Source, method: str, data: dict, cfg: dict, seed: int) -> dict:
    """Initialise, (matt: warm up with AIM), train next-token on the new rows, evaluate at each budget.

    ``cfg``: context, batch_size, lr, budgets (target tokens, ascending), aux_dim, and ``aim``
    (n_layers, steps, lr, batch_size, n_rows).
    """
    t0 = time.process_time()
    new = torch.tensor(initial_rows(src, method, data["ukrainian_train"], cfg["aux_dim"]), dtype=src.W_src.dtype)
    record = {"method": method, "seed": seed, "checkpoints": [], "aim_loss": [], "aim_tokens": 0}
    tokens_seen = 0
    if method == "matt":
        a = cfg["aim"]
        rows = aim_rows(src, data["ukrainian_train"][: a["n_rows"]], cfg["context"])
        new, record["aim_loss"], tokens_seen = aim.warm_up(
            src.net,
            src.W_src,
            new,
            rows,
            n_layers=a["n_layers"],
            steps=a["steps"],
            lr=a["lr"],
            batch_size=a["batch_size"],
            generator=torch_generator(seed + 1),
        )
        record["aim_tokens"] = tokens_seen
    budgets = list(cfg["budgets"])
    nonzero = [b for b in budgets if b > 0]
    if nonzero and nonzero[0] < tokens_seen:
        raise ValueError(f"matt's AIM warm-up reads {tokens_seen} tokens, more than the first budget {nonzero[0]}")
    docs = lm_documents(src, data["ukrainian_train"])
    trainer = NextTokenTrainer(src.net, src.W_src, new, cfg["lr"])
    lm_gen = torch_generator(seed + 2)  # the same stream of batches for every method
    lm_loss = []

    def checkpoint(budget):
        W = torch.cat([src.W_src, trainer.rows])
        scores = evaluate(src.net, W, src.tgt_tok, src.bos, data, cfg["context"], cfg["max_new_tokens"])
        record["checkpoints"].append(
            {"budget": budget, "tokens": tokens_seen, "cpu_s": time.process_time() - t0, **scores}
        )

    if budgets[0] == 0:  # the initialisation (matt: after its warm-up, whose tokens are recorded)
        checkpoint(0)
        budgets = budgets[1:]
    for budget in budgets:
        while tokens_seen + cfg["batch_size"] * cfg["context"] <= budget:
            batch = windows(docs, cfg["context"], cfg["batch_size"], lm_gen)
            lm_loss.append(trainer.step(batch))
            tokens_seen += batch.shape[0] * cfg["context"]
        checkpoint(budget)
    record["lm_loss"] = lm_loss
    return record


TASKS = ("mc", "gen", "bpc")


def recovery(task: str, value: float, source_value: float) -> float:
    """Target quality as a fraction of the source's: score / source score, and for bits per character
    (lower is better) source / target, so that 1 is full recovery and less is worse; NaN for a task the
    source never gets right."""
    if task == "bpc":
        return source_value / value
    return value / source_value if source_value > 0 else float("nan")


def save_source(out_dir, model, src_tok, tgt_tok) -> None:
    """The tiny source model (repro.llm.tiny's format) and both tokenisers, in ``out_dir``."""
    from pathlib import Path

    from repro.io import atomic_path
    from repro.llm.tiny import save_tiny, tiny_lm

    out = Path(out_dir)
    save_tiny(tiny_lm(model, "matt-source"), out)
    for name, tok in (("tokenizer.json", src_tok), ("target_tokenizer.json", tgt_tok)):
        with atomic_path(out / name) as tmp:
            tok.save(str(tmp))


def load_source(kind: str, model_dir, tokenizer_dir) -> Source:
    """``kind`` tiny: model and tokenisers in ``model_dir``; pretrained: a Hugging Face folder
    ``model_dir`` cached by the llm_cache rule and checked against its sidecar (its tokenizer is the
    source one) and the target tokenizer in ``tokenizer_dir``."""
    from pathlib import Path

    from tokenizers import Tokenizer

    tgt = Tokenizer.from_file(str(Path(tokenizer_dir) / "target_tokenizer.json"))
    if kind == "tiny":
        from repro.llm.tiny import load_tiny

        model = load_tiny(model_dir).module
        return Source(aim.TinyNet(model), Tokenizer.from_file(str(Path(model_dir) / "tokenizer.json")), tgt)
    from transformers import AutoModelForCausalLM

    from repro.data.sidecar import verify

    verify(model_dir)  # the llm_cache rule's folder, against the sha256 it wrote beside it
    model = AutoModelForCausalLM.from_pretrained(str(model_dir), local_files_only=True, dtype=torch.float32)
    return Source(aim.HFNet(model), source_tokenizer(kind, model_dir), tgt)


def source_tokenizer(kind: str, model_dir):
    """The pretrained model's own tokenizer as a ``tokenizers.Tokenizer``."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True).backend_tokenizer


def _mean_over_seeds(runs: list[dict], budget_index: int, task: str) -> np.ndarray:
    return np.mean([r["checkpoints"][budget_index][task] for r in runs], axis=0)


def summarise(source_scores: dict, runs: dict[str, list[dict]]) -> tuple[dict, list[dict]]:
    """metrics.json and the recovery table from the source model's scores and every run.

    ``runs[method]`` holds one record per unit (its ``unit``, with the seed that unit fixes) (the same seeds for every method). Recovery of a task
    is the target's mean score over the source's (bits per character: source over target, so that 1
    is full recovery and less is worse).
    """
    from repro.claims import require_paired, sample

    runs = {m: sorted(rs, key=lambda r: r["unit"]) for m, rs in runs.items()}
    require_paired({m: {r["unit"]: r["seed"] for r in rs} for m, rs in runs.items()}, "matt runs")
    seeds = [r["unit"] for r in next(iter(runs.values()))]
    budgets = [c["budget"] for c in next(iter(runs.values()))[0]["checkpoints"]]
    src_mean = {t: float(np.mean(source_scores[t])) for t in TASKS}

    def recovery_of(task, value):
        return recovery(task, value, src_mean[task])

    table = []
    for method, rs in runs.items():
        for b, budget in enumerate(budgets):
            row = {
                "method": method,
                "budget_tokens": budget,
                "tokens": float(np.mean([r["checkpoints"][b]["tokens"] for r in rs])),
                "cpu_s": float(np.mean([r["checkpoints"][b]["cpu_s"] for r in rs])),
            }
            for t in TASKS:
                score = float(np.mean(_mean_over_seeds(rs, b, t)))
                row[f"{t}"] = score
                row[f"recovery_{t}"] = recovery_of(t, score)
            table.append(row)
    last, first = len(budgets) - 1, 0
    item_ids = {t: [f"{t}{k}" for k in range(len(source_scores[t]))] for t in TASKS}
    metrics = {
        "source": {t: sample(source_scores[t], item_ids[t], "item") for t in TASKS},
        "score": {
            t: {m: sample(_mean_over_seeds(rs, last, t).tolist(), item_ids[t], "item") for m, rs in runs.items()}
            for t in TASKS
        },
        "score_first_budget": {
            t: {m: sample(_mean_over_seeds(rs, first, t).tolist(), item_ids[t], "item") for m, rs in runs.items()}
            for t in TASKS
        },
        # recovery is undefined for a task the source model never gets right (listed in recovery_undefined)
        "recovery": {
            t: {
                m: sample([recovery_of(t, float(np.mean(r["checkpoints"][last][t]))) for r in rs], seeds, "seed")
                for m, rs in runs.items()
            }
            for t in TASKS
            if src_mean[t] > 0
        },
        "recovery_first_budget": {
            t: {
                m: sample([recovery_of(t, float(np.mean(r["checkpoints"][first][t]))) for r in rs], seeds, "seed")
                for m, rs in runs.items()
            }
            for t in TASKS
            if src_mean[t] > 0
        },
        "recovery_undefined": [t for t in TASKS if src_mean[t] <= 0],
        "budgets_tokens": budgets,
        "cpu_s": {m: float(np.mean([r["checkpoints"][last]["cpu_s"] for r in rs])) for m, rs in runs.items()},
        "aim": {
            "tokens": float(np.mean([r["aim_tokens"] for r in runs.get("matt", [])])) if "matt" in runs else None,
            "loss_first": float(np.mean([r["aim_loss"][0] for r in runs["matt"]])) if "matt" in runs else None,
            "loss_last": float(np.mean([r["aim_loss"][-1] for r in runs["matt"]])) if "matt" in runs else None,
        },
    }
    if "matt" in runs and "focus" in runs:
        # the gain of MATT over FOCUS (bits per character saved) at the first budget minus at the last
        def gain(b):
            return _mean_over_seeds(runs["focus"], b, "bpc") - _mean_over_seeds(runs["matt"], b, "bpc")

        metrics["early_minus_late_gain_bpc"] = sample((gain(first) - gain(last)).tolist(), item_ids["bpc"], "item")
    return metrics, table


#: The claims on the token-budget variant, each a paired comparison by item: claim id -> (task, the
#: method MATT is compared with, the compared quantity as Fig. 1 labels it: MATT minus the method at the
#: last budget, or the early gain, (method - MATT) at the first budget minus the same at the last).
FIG1_CLAIMS = {
    "matt_multiple_choice_above_mean_floor": ("mc", "mean", "vs mean"),
    "matt_beats_mean_floor_bpc": ("bpc", "mean", "vs mean"),
    "matt_beats_fvt_bpc": ("bpc", "fvt", "vs FVT"),
    "gain_largest_early": ("bpc", "focus", "early gain"),
}

#: The columns of :func:`comparisons`, in order.
COMPARISON_COLUMNS = ["task", "comparator", "label", "estimate", "low", "high", "level", "n", "op", "threshold",
                      "tol", "interval", "claim", "status"]


def comparisons(metrics: dict, claims: list) -> list[dict]:
    """Each claim of :data:`FIG1_CLAIMS` that ``metrics`` can check, with the interval its verdict is
    decided on (:func:`repro.claims.interval_rows`: the mean paired difference over items at the last
    budget, MATT minus the comparator, or the early-minus-late gain; bounds at ``level`` over ``n``
    items, the claim's ``op`` against ``threshold`` (``tol``: a band's half-width or a margin, else NaN), the
    interval's kind and the verdict); a claim whose
    metric the run lacks (a method not trained) gives no row."""
    from repro.claims import interval_rows

    rows = []
    for row in interval_rows(claims, metrics, list(FIG1_CLAIMS)):
        task, comparator, label = FIG1_CLAIMS[row["claim"]]
        rows.append({"task": task, "comparator": comparator, "label": label,
                     **{k: row[k] for k in COMPARISON_COLUMNS if k in row}})
    return rows
