"""A synthetic leaderboard with planted capabilities, sparse popularity-biased records and known truth.

Generative model (one draw per seed):

- Skills ``k = 1..dim`` (math, code, translation, ...). A model ``m`` of family ``f`` and size ``s``
  has latent capability ``z_m = mu_f + e_m`` (family mean ``mu_f ~ N(0, family_scale^2 I)``,
  individual part ``e_m ~ N(0, I)``) and general strength ``size_effect * log2(s)``.
- A dataset ``d`` needs one or two skills: requirement ``r_d >= 0`` (unit norm) and difficulty
  ``b_d``. Its ``task`` (metadata) names its main skill.
- True quality ``q[m, d] = sigmoid(interaction * z_m . r_d + size_effect * log2(s_m) - b_d)`` in (0, 1).
- Text: a model card names family and size and the skills with ``e_mk > card_threshold`` ("strong
  at <synonym>, <synonym>"): **the individual part ``e_m`` is in the card and nowhere else** (metadata
  carries ``mu_f`` and size only). A dataset description names its skills with synonyms. This is the
  planted signal only a method that reads text can use for unseen models. Cards name strengths
  only: a frozen sentence embedding of a whole card does not bind "strong" / "weak" to several
  skills named in one card (measured with all-MiniLM-L6-v2: a ridge readout of ``e_m`` from the
  embeddings of cards naming both had out-of-sample R^2 <= 0), so cards that named weaknesses too
  planted a signal no text encoder of the method could see. :func:`cold_start_oracle` scores with
  what a cold start can know (the ceiling of any cold-start method).
- Metrics: each dataset reports 1-2 metrics with scale and direction (accuracy, error rate, F1 x 100,
  log loss); a record's value is the metric of ``q + N(0, noise^2)`` (clipped). A group is a
  (dataset, metric) pair, as in the reference code.
- Records: model ``m`` appears in group ``g`` with probability ``min(1, density * pop_m / mean(pop))``
  (log-popularity grows with size and family fame, and is public as ``downloads``).
- Routing tasks: a query of dataset ``d`` has its own requirement ``r_d + N(0, query_noise^2 I)``;
  a model answers it correctly with the quality formula at that requirement
  (:meth:`Leaderboard.query_accuracy`).
- Splits: ``unseen_model_frac`` of the models and ``unseen_dataset_frac`` of the datasets are held
  out (no training record); ``heldout_record_frac`` of the remaining records are held out for
  in-domain completion.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

__all__ = ["SKILLS", "FAMILIES", "METRICS", "LeaderboardConfig", "Leaderboard", "simulate_leaderboard", "card_posterior", "leaderboard_dump",
           "cold_start_oracle"]

#: Skill name -> synonyms used in cards and descriptions (one drawn per mention).
SKILLS: dict[str, tuple[str, ...]] = {
    "math": ("arithmetic", "algebra", "math word problems", "mathematical reasoning"),
    "code": ("code generation", "programming", "python coding", "software bugs"),
    "translation": ("machine translation", "multilingual text", "translating languages", "cross-lingual transfer"),
    "vision": ("image understanding", "visual question answering", "charts and diagrams", "photos"),
    "medicine": ("clinical notes", "medical questions", "biomedical literature", "diagnosis"),
    "law": ("legal documents", "contracts", "case law", "regulations"),
    "dialogue": ("conversation", "chat assistance", "instruction following", "customer support"),
    "science": ("physics problems", "chemistry", "scientific papers", "biology questions"),
}
FAMILIES = ("llama", "qwen", "mistral", "gemma", "phi", "falcon", "olmo", "bloom", "yi", "deepseek")
SIZES_B = (0.5, 1.0, 3.0, 7.0, 13.0, 34.0, 70.0)
VARIANTS = ("base", "instruct", "chat", "v2", "dpo", "sft", "merge", "ft")
#: name -> (higher is better, value of quality q)
METRICS: dict[str, tuple[bool, object]] = {
    "accuracy": (True, lambda q: q),
    "error_rate": (False, lambda q: 1.0 - q),
    "f1": (True, lambda q: 100.0 * q ** 1.3),
    "log_loss": (False, lambda q: -np.log(np.clip(q, 1e-3, 1.0))),
}


@dataclass(frozen=True)
class LeaderboardConfig:
    n_models: int = 200
    n_datasets: int = 40
    dim: int = 6                     # skills used (<= len(SKILLS))
    n_families: int = 6
    family_scale: float = 0.7        # sd of family means: what metadata can know
    size_effect: float = 0.25        # per doubling of parameters
    interaction: float = 1.6         # weight of z_m . r_d in the logit
    card_threshold: float = 0.5      # |e_mk| above which the card mentions skill k
    noise: float = 0.03              # sd of a record around q
    density: float = 0.25            # mean probability of a (model, group) record
    popularity_sd: float = 1.0       # sd of log-popularity beyond size and family
    unseen_model_frac: float = 0.25
    unseen_dataset_frac: float = 0.25
    heldout_record_frac: float = 0.15


@dataclass
class Leaderboard:
    """One draw: entities, records and the truth ``quality[m, d]``."""

    models: pd.DataFrame     # model, family, size_b, downloads, card, seen
    datasets: pd.DataFrame   # dataset, task, description, seen
    groups: pd.DataFrame     # group, dataset, metric, higher_is_better
    records: pd.DataFrame    # model, group, value, split ("train" | "heldout" | "cold")
    quality: np.ndarray      # (n_models, n_datasets) true quality, higher is better
    latent: np.ndarray       # (n_models, dim) true capability z_m (for diagnostics)
    family_mean: np.ndarray  # (n_families, dim) mu_f, rows in FAMILIES order
    individual: np.ndarray   # (n_models, dim) e_m = z_m - mu_f, the part only the card tells
    requirement: np.ndarray  # (n_datasets, dim) unit-norm requirement r_d
    difficulty: np.ndarray   # (n_datasets,) b_d
    config: dict

    def query_accuracy(self, d: int, query_req: np.ndarray) -> np.ndarray:
        """(M, Q) probability that each model answers each query of dataset ``d`` correctly: the
        quality logit with the query's own requirement vector (rows of ``query_req``) in place of r_d."""
        c = self.config
        logit = (c["interaction"] * self.latent @ query_req.T
                 + c["size_effect"] * np.log2(self.models.size_b.to_numpy())[:, None] - self.difficulty[d])
        return 1.0 / (1.0 + np.exp(-logit))


def _card(rng, family: str, size: float, resid: np.ndarray, skills: list[str], thr: float) -> str:
    strong = [rng.choice(SKILLS[s]) for s, e in zip(skills, resid) if e > thr]
    parts = [f"A {size:g}B parameter language model from the {family} family."]
    parts.append(("It is strong at " + ", ".join(strong) + ".") if strong else "A general purpose model.")
    return " ".join(parts)


def card_posterior(lb: "Leaderboard") -> np.ndarray:
    """(M, dim) E[e_m | card]: the individual part as far as the card tells it (truncated normal means)."""
    from scipy.stats import norm

    thr = lb.config["card_threshold"]
    said = lb.individual > thr                       # the card names exactly these skills
    above = norm.pdf(thr) / norm.sf(thr)
    below = -norm.pdf(thr) / norm.cdf(thr)
    return np.where(said, above, below)


def cold_start_oracle(lb: "Leaderboard") -> np.ndarray:
    """(M, G) scores from what a cold start can know, with the generator's own weights: the family
    mean and size (metadata), the card's E[e_m | card], and the skills a description names (equal
    weights). Groups of one dataset share its scores. The ceiling of any method scoring from text
    and metadata; the true quality is the ceiling of everything."""
    c = lb.config
    fam = pd.Categorical(lb.models.family, categories=list(FAMILIES)).codes
    z = lb.family_mean[fam] + card_posterior(lb)
    r = (lb.requirement > 0).astype(float)
    r /= np.linalg.norm(r, axis=1, keepdims=True)
    s = c["interaction"] * z @ r.T + c["size_effect"] * np.log2(lb.models.size_b.to_numpy())[:, None]
    return s[:, lb.groups.d.to_numpy()]


def simulate_leaderboard(cfg: LeaderboardConfig, seed: int) -> Leaderboard:
    """Draw one leaderboard (see the module docstring). Deterministic in ``seed``."""
    if not 1 <= cfg.dim <= len(SKILLS):
        raise ValueError(f"dim must lie in 1..{len(SKILLS)}; got {cfg.dim}")
    if not 1 <= cfg.n_families <= len(FAMILIES):
        raise ValueError(f"n_families must lie in 1..{len(FAMILIES)}; got {cfg.n_families}")
    rng = np.random.default_rng(seed)
    skills = list(SKILLS)[: cfg.dim]
    families = list(FAMILIES[: cfg.n_families])

    # models
    fam = rng.integers(0, cfg.n_families, cfg.n_models)
    mu = rng.normal(0.0, cfg.family_scale, (cfg.n_families, cfg.dim))
    resid = rng.normal(0.0, 1.0, (cfg.n_models, cfg.dim))
    z = mu[fam] + resid                                                # (M, dim)
    size = rng.choice(SIZES_B, cfg.n_models)
    fame = rng.normal(0.0, 0.7, cfg.n_families)
    log_pop = 0.5 * np.log2(size) + fame[fam] + rng.normal(0.0, cfg.popularity_sd, cfg.n_models)
    pop = np.exp(log_pop)
    names = [f"{families[f]}-{s:g}b-{rng.choice(VARIANTS)}-{i:04d}" for i, (f, s) in enumerate(zip(fam, size))]
    cards = [_card(rng, families[f], s, e, skills, cfg.card_threshold) for f, s, e in zip(fam, size, resid)]
    models = pd.DataFrame({"model": names, "family": [families[f] for f in fam], "size_b": size,
                           "downloads": np.round(1000 * pop).astype(int), "card": cards})

    # datasets
    req = np.zeros((cfg.n_datasets, cfg.dim))
    tasks, descs = [], []
    for d in range(cfg.n_datasets):
        ks = rng.choice(cfg.dim, size=min(cfg.dim, 1 + int(rng.random() < 0.5)), replace=False)
        req[d, ks] = rng.uniform(0.5, 1.5, ks.size)
        main = ks[np.argmax(req[d, ks])]
        tasks.append(skills[main])
        words = " and ".join(rng.choice(SKILLS[skills[k]]) for k in ks)
        descs.append(f"A benchmark of {words} questions.")
    req /= np.linalg.norm(req, axis=1, keepdims=True)
    difficulty = rng.normal(0.0, 0.7, cfg.n_datasets)
    datasets = pd.DataFrame({"dataset": [f"bench{d:03d}" for d in range(cfg.n_datasets)], "task": tasks,
                             "description": descs})
    logit = cfg.interaction * z @ req.T + cfg.size_effect * np.log2(size)[:, None] - difficulty[None, :]
    quality = 1.0 / (1.0 + np.exp(-logit))                              # (M, D)

    # groups: each dataset reports 1-2 metrics
    metric_names = list(METRICS)
    rows = []
    for d in range(cfg.n_datasets):
        for name in rng.choice(metric_names, size=1 + int(rng.random() < 0.4), replace=False):
            rows.append((f"{datasets.dataset[d]}|{name}", datasets.dataset[d], name, METRICS[name][0], d))
    groups = pd.DataFrame(rows, columns=["group", "dataset", "metric", "higher_is_better", "d"])

    # splits
    unseen_m = rng.random(cfg.n_models) < cfg.unseen_model_frac
    unseen_d = rng.random(cfg.n_datasets) < cfg.unseen_dataset_frac
    models["seen"], datasets["seen"] = ~unseen_m, ~unseen_d

    # records: popularity-biased presence, noisy values in each metric's scale
    p_rec = np.minimum(1.0, cfg.density * pop / pop.mean())
    recs = []
    for g, grow in groups.iterrows():
        present = np.flatnonzero(rng.random(cfg.n_models) < p_rec)
        q = np.clip(quality[present, grow.d] + rng.normal(0.0, cfg.noise, present.size), 1e-3, 1 - 1e-3)
        values = METRICS[grow.metric][1](q)
        for m, v in zip(present, values):
            cold = unseen_m[m] or unseen_d[grow.d]
            split = "cold" if cold else ("heldout" if rng.random() < cfg.heldout_record_frac else "train")
            recs.append((names[m], grow.group, float(v), split))
    records = pd.DataFrame(recs, columns=["model", "group", "value", "split"])
    return Leaderboard(models=models, datasets=datasets, groups=groups, records=records, quality=quality,
                       latent=z, family_mean=mu, individual=resid, requirement=req, difficulty=difficulty, config=asdict(cfg))


def leaderboard_dump(lb: Leaderboard) -> pd.DataFrame:
    """Every record of ``lb`` (whatever its split) as a long-format dump that
    :func:`repro.data.leaderboard.load_leaderboard` reads: the fixture of the ``source: remote`` path."""
    recs = lb.records.merge(lb.groups[["group", "dataset", "metric", "higher_is_better"]], on="group")
    recs = recs.merge(lb.models[["model", "card", "family", "size_b", "downloads"]], on="model")
    recs = recs.merge(lb.datasets[["dataset", "description", "task"]], on="dataset")
    recs = recs.rename(columns={"card": "model_card", "description": "dataset_desc"})
    cols = ["model", "dataset", "metric", "value", "higher_is_better", "model_card", "dataset_desc", "task", "family",
            "size_b", "downloads"]
    return recs[cols].sort_values(["dataset", "metric", "model"]).reset_index(drop=True)
