"""modellens experiment: one leaderboard per seed, every recommender on it, evaluation by split.

Splits (model side x dataset side): ``seen_seen`` ranks, in a training group, the seen models
without a training record there (in-domain completion); ``unseen_seen``, ``seen_unseen`` and
``unseen_unseen`` rank every model of the model side in every group of the dataset side. The
synthetic truth lets every candidate be ranked (the reference ranks only models with records).
The metrics are the reference's (:func:`evaluate_truth`): NDCG@K with gains ``2^rel - 1`` on the
true qualities min-max scaled within the candidate set, Hit@K and Recall@K over the groups with at
least K candidates, and the weighted taus pooled over groups with weights n (n - 1) / 2.

Reference points beside the recommenders: ``oracle`` (true quality; the ceiling), ``random`` (the
floor) and ``run_all`` (run every candidate on a probe set of ``n_probe`` items of the target
dataset: quality estimated as a binomial share; cost ``n_probe`` per candidate). Fig. 2's
regret-vs-cost: a strategy runs its top-k candidates on the probe set and keeps the best estimate;
``run_all`` is every strategy at k = N.
"""

from __future__ import annotations

import logging
import zlib

import numpy as np
import pandas as pd

from repro.claims import require_paired, sample
from repro.missing import as_float
from repro.stats.intervals import bootstrap_interval
from repro.tablecells import mean_spread_of
from repro.methods.modellens import name_tokens
from repro.methods.recommenders import RECOMMENDERS, RecProblem, standardise
from repro.metrics.ranking import (
    hit_at_k,
    minmax,
    ndcg_at_k,
    pair_weighted_mean,
    pessimistic_order,
    recall_at_k,
    weighted_tau_bottom,
    weighted_tau_top,
)
from repro.papers.modellens.synth import METRICS, SKILLS, Leaderboard, LeaderboardConfig, simulate_leaderboard

__all__ = [
    "SPLITS",
    "hashed_text_embedding",
    "texts_of",
    "build_problem",
    "split_candidates",
    "evaluate_truth",
    "evaluate_scores",
    "probe_quality",
    "regret_curve",
    "routing_accuracy",
    "modellens_variant",
    "run_ablations",
    "prepare_seed",
    "run_seed",
    "aggregate",
    "table1",
    "ablation_table",
    "encode",
    "embed_leaderboards",
    "lookup_embedding",
    "unit_inputs",
]

log = logging.getLogger(__name__)
SPLITS = ("seen_seen", "unseen_seen", "seen_unseen", "unseen_unseen")
REFERENCE = ("oracle", "run_all")


def hashed_text_embedding(texts: list[str], dim: int = 384) -> np.ndarray:
    """A bag-of-words stand-in for MiniLM (tests only): word counts hashed into ``dim`` buckets, L2 norm."""
    out = np.zeros((len(texts), dim), dtype=np.float32)
    for i, text in enumerate(texts):
        for word in text.lower().replace(".", " ").replace(",", " ").split():
            out[i, zlib.crc32(word.encode()) % dim] += 1.0
    return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)


def texts_of(lb: Leaderboard) -> list[str]:
    """Every text to embed: model cards, then dataset descriptions."""
    return list(lb.models.card) + list(lb.datasets.description)


def build_problem(lb: Leaderboard, card_emb: np.ndarray, desc_emb: np.ndarray) -> RecProblem:
    """The recommenders' view of ``lb``: metadata, text, and the training records only."""
    model_index = {m: i for i, m in enumerate(lb.models.model)}
    group_index = {g: i for i, g in enumerate(lb.groups.group)}
    fam = pd.Categorical(lb.models.family).codes.astype(np.int64)
    task = np.array([list(SKILLS).index(t) for t in lb.datasets.task])
    d_of_g = lb.groups.d.to_numpy()
    train = []
    recs = lb.records[lb.records.split == "train"]
    for g, part in recs.groupby("group", sort=True):
        if len(part) < 2:
            continue
        gi = group_index[g]
        train.append(
            (
                gi,
                part.model.map(model_index).to_numpy(),
                standardise(part.value.to_numpy(), bool(lb.groups.higher_is_better.iloc[gi])),
            )
        )
    group_seen = np.zeros(len(lb.groups), dtype=bool)
    group_seen[[g for g, _, _ in train]] = True
    return RecProblem(
        model_family=fam,
        model_log_size=np.log2(lb.models.size_b.to_numpy()),
        model_log_pop=np.log(lb.models.downloads.to_numpy() + 1.0),
        model_text=card_emb,
        model_tokens=[name_tokens(n) for n in lb.models.model],
        model_seen=lb.models.seen.to_numpy(),
        group_text=desc_emb[d_of_g],
        group_task=task[d_of_g],
        group_metric=np.array([list(METRICS).index(m) for m in lb.groups.metric]),
        group_seen=group_seen,
        train=train,
    )


def split_candidates(lb: Leaderboard, problem: RecProblem) -> dict[str, list[tuple[int, np.ndarray]]]:
    """Per split, the (group, candidate models) pairs with at least two candidates."""
    y_train = {g: set(ms) for g, ms, _ in problem.train}
    model_seen = problem.model_seen
    out = {s: [] for s in SPLITS}
    for g in range(problem.n_groups):
        d_seen = bool(lb.datasets.seen.iloc[lb.groups.d.iloc[g]]) and problem.group_seen[g]
        for m_side in ("seen", "unseen"):
            cands = np.flatnonzero(model_seen == (m_side == "seen"))
            if m_side == "seen" and d_seen:
                cands = np.array([m for m in cands if m not in y_train.get(g, ())], dtype=np.int64)
            split = f"{m_side}_{'seen' if d_seen else 'unseen'}"
            if cands.size >= 2:
                out[split].append((g, cands))
    return out


def evaluate_truth(items, ks) -> dict[str, float]:
    """The reference's summary of one split over its groups; ``items``: (truth, scores) per group.

    NDCG@k (gains ``2^rel - 1`` on the truth min-max scaled within the group), Hit@k and Recall@k
    averaged over the groups with at least k candidates (NaN when none has); Hit@1 over every group;
    both weighted taus averaged with weights n (n - 1) / 2 (:mod:`repro.metrics.ranking`)."""
    rows = []
    for q, s in items:
        row = {
            "n": len(q),
            "hit@1": hit_at_k(q, s, 1),
            "tau_bottom": weighted_tau_bottom(q, s),
            "tau_top": weighted_tau_top(q, s),
        }
        for k in ks:
            row.update(
                {
                    f"ndcg@{k}": ndcg_at_k(minmax(q), s, k, gain="exponential"),
                    f"hit@{k}": hit_at_k(q, s, k),
                    f"recall@{k}": recall_at_k(q, s, k),
                }
            )
        rows.append(row)
    if not rows:
        return {}
    table = pd.DataFrame(rows)
    out = {"hit@1": float(table["hit@1"].mean())}
    for k in ks:
        enough = table[table.n >= k]
        for col in (f"ndcg@{k}", f"hit@{k}", f"recall@{k}"):
            out[col] = float(enough[col].mean()) if len(enough) else float("nan")
    for col in ("tau_bottom", "tau_top"):
        out[col] = pair_weighted_mean(table[col], table.n)
    return out


def evaluate_scores(lb: Leaderboard, scores: np.ndarray, splits: dict, ks) -> dict[str, dict[str, float]]:
    """:func:`evaluate_truth` per split (truth: the planted quality)."""
    return {
        split: evaluate_truth([(lb.quality[cands, lb.groups.d.iloc[g]], scores[cands, g]) for g, cands in pairs], ks)
        for split, pairs in splits.items()
    }


def probe_quality(lb: Leaderboard, n_probe: int, rng: np.random.Generator) -> np.ndarray:
    """(M, G) quality estimated by running each model on ``n_probe`` items of the group's dataset."""
    q = lb.quality[:, lb.groups.d.to_numpy()]
    return rng.binomial(n_probe, q) / n_probe


def regret_curve(lb: Leaderboard, scores: np.ndarray, probe: np.ndarray, pairs, budgets) -> np.ndarray:
    """Mean regret (best true quality - quality of the pick) after probing the top-k, for each k."""
    out = np.zeros(len(budgets))
    for g, cands in pairs:
        q = lb.quality[cands, lb.groups.d.iloc[g]]
        order = pessimistic_order(q, scores[cands, g])
        for i, k in enumerate(budgets):
            top = order[: min(k, cands.size)]
            pick = top[np.argmax(probe[cands[top], g])]
            out[i] += q.max() - q[pick]
    return out / max(len(pairs), 1)


def routing_accuracy(
    lb: Leaderboard, all_scores: dict[str, np.ndarray], pairs, rcfg: dict, rng: np.random.Generator
) -> tuple[dict[str, list[float]], float]:
    """Routing on synthetic QA queries of the unseen datasets, over each method's top-K pool.

    Per dataset: ``n_train + n_test`` queries with their own requirement vectors (the router's
    features); every candidate's correctness is observed on the training queries; the router sends
    a test query to the pool model with the highest correctness among its ``k_neighbours`` nearest
    training queries (first in the pool's order on ties). Accuracy is the expected correctness of
    the routed model. Returns mean accuracy per method and K, and the full pool's.
    """
    ks, n_tr, n_te = rcfg["ks"], rcfg["n_train"], rcfg["n_test"]
    first = {}
    for g, cands in pairs:
        first.setdefault(int(lb.groups.d.iloc[g]), (g, cands))
    acc = {m: np.zeros(len(ks)) for m in all_scores}
    full = 0.0
    for d, (g, cands) in sorted(first.items()):
        req = lb.requirement[d] + rng.normal(0.0, rcfg["query_noise"], (n_tr + n_te, lb.requirement.shape[1]))
        p = lb.query_accuracy(d, req)[cands]  # (C, Q)
        y = rng.random((cands.size, n_tr)) < p[:, :n_tr]
        dist = ((req[n_tr:, None, :] - req[None, :n_tr, :]) ** 2).sum(-1)  # (T, n_train)
        near = np.argsort(dist, axis=1, kind="stable")[:, : rcfg["k_neighbours"]]
        est = y[:, near].mean(-1)  # (C, T)
        p_te = p[:, n_tr:]

        def routed(pool: np.ndarray) -> float:
            return float(p_te[pool[np.argmax(est[pool], axis=0)], np.arange(n_te)].mean())

        full += routed(np.arange(cands.size))
        for m, scores in all_scores.items():
            order = pessimistic_order(lb.quality[cands, d], scores[cands, g])
            acc[m] += [routed(order[: min(k, cands.size)]) for k in ks]
    n = max(len(first), 1)
    return {m: (a / n).tolist() for m, a in acc.items()}, full / n


def modellens_variant(cfg: dict, ablation: dict | None = None):
    """ModelLens with the preset's options, and ``ablation``'s overrides (one part removed) on top."""
    return RECOMMENDERS.create(
        "modellens", **{**cfg.get("method_options", {}).get("modellens", {}), **(ablation or {})}
    )


def run_ablations(cfg: dict, problem: RecProblem, evaluate, method_seed: int) -> dict[str, dict]:
    """Every variant of ``cfg["ablations"]`` (name -> ModelLensConfig overrides) on ``problem`` with the
    full model's seed; ``evaluate(scores) -> {split: metrics}``."""
    return {
        name: evaluate(modellens_variant(cfg, over).fit_predict(problem, method_seed))
        for name, over in cfg.get("ablations", {}).items()
    }


def prepare_seed(cfg: dict, data_seed: int, embed):
    """One seed's leaderboard, the recommenders' problem, the evaluation splits and an evaluator."""
    lb = simulate_leaderboard(LeaderboardConfig(**cfg["leaderboard"]), data_seed)
    emb = embed(texts_of(lb))
    n_m = len(lb.models)
    problem = build_problem(lb, emb[:n_m], emb[n_m:])
    splits = split_candidates(lb, problem)
    return lb, problem, splits, lambda scores: evaluate_scores(lb, scores, splits, cfg["ks"])


def run_seed(cfg: dict, data_seed: int, method_seed: int, embed) -> dict:
    """Every method of ``cfg["methods"]`` plus the oracle and run_all on the leaderboard of ``data_seed``.

    ``embed(texts) -> (N, E)`` embeds texts (MiniLM in the workflow). Every method gets ``method_seed``.
    """
    lb, problem, splits, evaluate = prepare_seed(cfg, data_seed, embed)
    probe = probe_quality(lb, cfg["n_probe"], np.random.default_rng(method_seed))
    all_scores = {"oracle": lb.quality[:, lb.groups.d.to_numpy()], "run_all": probe}
    for name in cfg["methods"]:
        model = (
            modellens_variant(cfg)
            if name == "modellens"
            else RECOMMENDERS.create(name, **cfg.get("method_options", {}).get(name, {}))
        )
        all_scores[name] = model.fit_predict(problem, method_seed)
    pairs = splits["unseen_unseen"]
    n_cands = int(np.median([c.size for _, c in pairs])) if pairs else 0
    budgets = sorted({max(1, int(round(f * n_cands))) for f in cfg["budget_fracs"]} | {n_cands}) if n_cands else []
    result = {
        "source": "synthetic",
        "data_seed": data_seed,
        "method_seed": method_seed,
        "n_records": {s: int((lb.records.split == s).sum()) for s in ("train", "heldout", "cold")},
        "n_groups": {s: len(p) for s, p in splits.items()},
        "n_candidates_unseen_unseen": n_cands,
        "budgets": budgets,
        "metrics": {},
        "regret": {},
    }
    for name, scores in all_scores.items():
        result["metrics"][name] = evaluate(scores)
        if name != "run_all" and budgets:
            result["regret"][name] = regret_curve(lb, scores, probe, pairs, budgets).tolist()
        log.info("seed %d %s unseen_unseen %s", data_seed, name, result["metrics"][name].get("unseen_unseen"))
    if "routing" in cfg and pairs:
        route_rng = np.random.default_rng([method_seed, 1])  # same queries for every pool
        result["routing"], result["routing_full"] = routing_accuracy(lb, all_scores, pairs, cfg["routing"], route_rng)
        result["routing_ks"] = list(cfg["routing"]["ks"])
    return result


def aggregate(runs: dict[int, dict], cfg: dict) -> tuple[dict, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """metrics.json (per-seed samples), the tidy split table, the regret-vs-cost and routing tables."""
    seeds = sorted(runs)
    methods = list(next(iter(runs.values()))["metrics"])
    require_paired(
        {
            m: {s: (runs[s]["data_seed"], runs[s]["method_seed"]) for s in seeds if m in runs[s]["metrics"]}
            for m in methods
        },
        "modellens runs",
    )
    k = cfg["main_k"]
    rows = []
    for s in seeds:
        for m, per_split in runs[s]["metrics"].items():
            for split, vals in per_split.items():
                rows.append({"seed": s, "method": m, "split": split, **vals})
    tidy = pd.DataFrame(rows)
    columns = {
        "ndcg": f"ndcg@{k}",
        "recall": f"recall@{k}",
        "hit": f"hit@{k}",
        "tau_bottom": "tau_bottom",
        "tau_top": "tau_top",
    }
    metrics: dict = {
        "source": runs[seeds[0]].get("source", "synthetic"),
        "main_k": k,
        "seeds": seeds,
        **{key: {} for key in columns},
        "regret": {},
    }
    for split in SPLITS:
        for m in methods:
            part = tidy[(tidy.split == split) & (tidy.method == m)].sort_values("seed")
            for key, col in columns.items():
                # a seed without a group of k candidates has no value at k (the same seeds for every method)
                vals = part.dropna(subset=[col]) if col in part else part.iloc[:0]
                if not vals.empty:
                    metrics[key].setdefault(split, {})[m] = {
                        "mean": float(vals[col].mean()),
                        "per_unit": sample(vals[col], vals.seed, "seed"),
                    }
    # regret at the cheapest budget at or above budget_frac of the candidates vs run_all (k = N)
    reg_rows = []
    for s in seeds:
        budgets, n = runs[s]["budgets"], runs[s]["n_candidates_unseen_unseen"]
        for m, curve in runs[s]["regret"].items():
            for b, r in zip(budgets, curve):
                reg_rows.append({"seed": s, "method": m, "cost": b, "cost_frac": b / n, "regret": r})
    regret = pd.DataFrame(reg_rows)
    if not regret.empty:
        frac = cfg["claim_budget_frac"]
        for m in methods:
            if m == "run_all":
                continue
            at = [
                (s, g[g.cost_frac >= frac - 1e-9].sort_values("cost").iloc[0])
                for s, g in regret[regret.method == m].groupby("seed")
            ]
            metrics["regret"][m] = {
                "cost_frac": float(np.mean([r.cost_frac for _, r in at])),
                "per_unit": sample([r.regret for _, r in at], [s for s, _ in at], "seed"),
            }
        full = regret[regret.cost_frac >= 1.0 - 1e-9].groupby("seed").regret.mean()
        metrics["regret"]["run_all"] = {"cost_frac": 1.0, "per_unit": sample(full.values, full.index, "seed")}
    metrics["routing"], route_rows = {}, []
    for s in seeds:
        if "routing" not in runs[s]:
            continue
        for m, accs in runs[s]["routing"].items():
            route_rows += [{"seed": s, "method": m, "k": k, "accuracy": a} for k, a in zip(runs[s]["routing_ks"], accs)]
        route_rows += [
            {"seed": s, "method": "full_pool", "k": k, "accuracy": runs[s]["routing_full"]}
            for k in runs[s]["routing_ks"]
        ]
    routing = pd.DataFrame(route_rows, columns=["seed", "method", "k", "accuracy"])
    if not routing.empty:
        at = routing[routing.k == cfg["routing_k"]].sort_values("seed")
        metrics["routing"] = {
            "k": cfg["routing_k"],
            "accuracy": {
                m: {"mean": float(g.accuracy.mean()), "per_unit": sample(g.accuracy, g.seed, "seed")}
                for m, g in at.groupby("method")
            },
        }
    return metrics, tidy, regret, routing


def table1(tidy: pd.DataFrame, k: int) -> pd.DataFrame:
    """Mean +- s.e. over seeds of NDCG@k, Recall@k, Hit@k, Hit@1 and both taus, methods x splits.

    A seed without a value (NaN: no group with k candidates in that seed) is left out of its cell; a cell over
    one seed has no s.e. and one over none no mean: both print as missing (:func:`repro.tablecells.mean_spread_of`)."""
    out = []
    for (m, split), g in tidy.groupby(["method", "split"], sort=True):
        row = {"method": m, "split": split, "n_seeds": len(g)}
        for col in (f"ndcg@{k}", f"recall@{k}", f"hit@{k}", "hit@1", "tau_bottom", "tau_top"):
            row[col] = mean_spread_of(g[col], "se")
        out.append(row)
    return pd.DataFrame(out)


def ablation_table(runs: dict[int, dict], ablation_runs: dict[int, dict], k: int) -> pd.DataFrame:
    """Each ablation beside the full ModelLens of the same seeds: NDCG@k and top-weighted tau per split,
    and the paired difference (variant - full) with its 95% bootstrap interval over seeds.

    A seed without a value (NDCG@k where no group of the split has k candidates: NaN, null in the seed's
    JSON) is left out of that row's mean and of its pairs; ``n_seeds`` counts the seeds a row is over, and a
    split and metric that no seed has gets no row."""
    seeds = sorted(ablation_runs)
    if sorted(runs) != seeds:
        raise ValueError(f"ablation seeds {seeds} differ from the main runs' {sorted(runs)}")
    for s in seeds:
        if (runs[s]["data_seed"], runs[s]["method_seed"]) != (
            ablation_runs[s]["data_seed"],
            ablation_runs[s]["method_seed"],
        ):
            raise ValueError(f"seed {s}: the ablation ran on other data or another method seed than the full model")
    variants = list(next(iter(ablation_runs.values()))["metrics"])

    def values(by_seed: dict[int, dict], method: str, split: str, col: str) -> np.ndarray:
        return np.array([as_float(by_seed[s]["metrics"][method].get(split, {}).get(col)) for s in seeds])

    rows = []
    for split in SPLITS:
        for col in (f"ndcg@{k}", "tau_top"):
            full = values(runs, "modellens", split, col)
            have = ~np.isnan(full)
            if not have.any():
                continue
            rows.append(
                {
                    "split": split,
                    "metric": col,
                    "variant": "full",
                    "mean": full[have].mean(),
                    "diff": 0.0,
                    "low": np.nan,
                    "high": np.nan,
                    "n_seeds": int(have.sum()),
                }
            )
            for v in variants:
                x = values(ablation_runs, v, split, col)
                both = have & ~np.isnan(x)
                d = x[both] - full[both]
                row = {
                    "split": split,
                    "metric": col,
                    "variant": v,
                    "mean": x[both].mean() if both.any() else np.nan,
                    "diff": d.mean() if both.any() else np.nan,
                    "low": np.nan,
                    "high": np.nan,
                    "n_seeds": int(both.sum()),
                }
                if both.sum() >= 2:
                    iv = bootstrap_interval(d, level=0.95, seed=0)
                    row.update(low=iv.low, high=iv.high)
                rows.append(row)
    return pd.DataFrame(rows)


def encode(texts: list[str], encoder: str) -> np.ndarray:
    """Embed ``texts``: ``minilm`` (all-MiniLM-L6-v2 from its offline package) or ``hashing`` (bag of words)."""
    if encoder == "minilm":
        from repro.nn.encoders_offline import encode_texts, load_minilm

        return encode_texts(load_minilm(), texts)
    if encoder == "hashing":
        return hashed_text_embedding(texts)
    raise ValueError(f"text_encoder must be minilm or hashing; got {encoder!r}")


def embed_leaderboards(cfg: dict, data_seeds: list[int], encoder: str) -> tuple[np.ndarray, np.ndarray]:
    """The distinct texts of every seed's leaderboard and their embeddings (one encoder load)."""
    texts = sorted({t for s in data_seeds for t in texts_of(simulate_leaderboard(LeaderboardConfig(**cfg), s))})
    return np.array(texts), encode(texts, encoder)


def lookup_embedding(texts: np.ndarray, emb: np.ndarray):
    """``embed(list of texts)`` backed by a precomputed table; a text not in it is an error."""
    index = {t: i for i, t in enumerate(texts.tolist())}

    def embed(batch: list[str]) -> np.ndarray:
        missing = [t for t in batch if t not in index]
        if missing:
            raise ValueError(
                f"{len(missing)} texts have no embedding (first: {missing[0]!r}); "
                "the embedding table is stale: rebuild results/modellens/text_embeddings.npz"
            )
        return emb[[index[t] for t in batch]]

    return embed


def unit_inputs(job, emb_path: str) -> tuple[int, int, object]:
    """A seed job's data seed and method seed (both from the unit, never the method: paired) and its ``embed``."""
    seed = int(job.wildcards["seed"])
    from repro.io import load_npz

    table = load_npz(emb_path, ["texts", "emb"])
    return (
        job.seed_for("modellens_data", seed=seed),
        job.seed_for("modellens_method", seed=seed),
        lookup_embedding(table["texts"], table["emb"]),
    )
