"""ModelLens: a performance-aware latent space over (model, dataset, metric) for model recommendation.

"ModelLens: Finding the Best for Your Task from Myriads of Models" (arXiv 2605.07075); architecture
read from luisrui/ModelLens (commit 009e4c1), our own code.

Score of model m in group g (a (dataset, metric) pair)::

    h_m = [E_id(m), mean_t E_tok(hash(t)) over name tokens, P_card(card_m), E_fam(f_m), P_size(log size_m)]
    h_g = [E_gid(g), P_desc(desc_g), E_metric(metric_g)]
    h = backbone([h_m, h_g])                                   # 2-layer ReLU MLP
    s(m, g) = (w_rank . h + prior([E_fam(f_m), P_size(log size_m)])) / max(tau, 1e-3)   # tau learnable
    z(m, g) = w_point . h                                      # pointwise head (regression)

Loss over the groups with training records (values standardised within the group, higher is
better), the reference's ``JointCriterion`` (``module/model/Loss.py``, ``loss_type: ensemble``)::

    L = w_list * (ListMLE(s) + w_reg * MSE(z))                        # ListwisePointwiseLoss
      + w_pair * (BPR(s) + w_reg * mean over pairs [(z_i - y_i)^2 + (z_j - y_j)^2])   # PairwisePointwiseLoss

with w_list 0.5, w_pair 1.0, w_reg 0.1 as in the reference's final config (lambda_list,
lambda_pair, point_loss_weight) and its listwise temperature 1 (:func:`ranking_losses` names each
term). Trained with AdamW at torch's default weight decay 0.01 and the gradient norm clipped at 5, as
the reference trains (its config's ``weight_decay: 0.0001`` is never passed to the optimiser).
Cold start: in training each model and group ID is replaced by the unknown token with probability
``unk_prob`` (10%, the reference's ``id_dropout_rate``); an unseen model or group is scored with the
unknown ID, i.e. from its name tokens, text and metadata alone.

Ablations (switches of :class:`ModelLensConfig`, each one part removed, everything else equal):
``use_text=False`` feeds zero vectors in place of the frozen card and description embeddings (their
projections reduce to constant biases); ``use_prior=False`` drops the family/size prior term;
``w_list`` or ``w_pair`` set to 0 removes that side with its regression (the reference's
``pairwise_pointwise`` and ``listwise_pointwise`` ablations), ``w_reg`` set to 0 the regression on
both sides (its ``listwise_pairwise``, which sums ListMLE over positions instead of averaging);
``unk_prob=0`` removes the unknown-token dropout (the unknown rows are then never trained, so a cold
start falls back on untrained embeddings).

Choices the paper leaves open
- Sizes (embedding 32, hidden 128, 2 hidden layers), learning rate 3e-3 (reference 1e-3 with
  minibatches), full-batch steps: set in config; chosen small for a CPU.
- Name tokens: the name split at ``-_/.``; serial numbers (4+ digits) are not tokens.
- Directions: values turned higher-is-better per metric before standardising (the reference has
  no direction field).

Deviations
- Text features: all-MiniLM-L6-v2 (384-d, offline package) instead of 1536-d API embeddings.
- Training runs full batch over all training groups at each step (small synthetic leaderboards);
  no early stopping (the reference stops after 20 epochs without validation gain). The pairwise
  terms therefore average over every ordered pair of a group with weight 1, where the reference
  samples pairs with a weight from its data loader (not in the public code).
- ListMLE needs each group's candidates best first; the reference's loader that orders them is not
  public, so the order here is by the standardised value (ties by index).
- Size enters as a learned projection of log2(size), not the reference's 20 size buckets; no task
  embedding (our datasets' task is a function of their description); no dropout in the MLP (the
  reference's is 0.02).
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from repro.methods.recommenders import RECOMMENDERS, RecProblem

__all__ = [
    "ModelLensConfig",
    "ModelLensNet",
    "name_tokens",
    "listmle",
    "ranking_losses",
    "modellens_loss",
    "train_modellens",
    "ModelLens",
]


@dataclass(frozen=True)
class ModelLensConfig:
    emb_dim: int = 32  # each ID / token / text projection
    hidden: int = 128  # MLP width (2 hidden layers)
    n_hash: int = 1024  # buckets of hashed name tokens
    unk_prob: float = 0.1  # ID -> unknown token in training (reference: 10%)
    w_list: float = 0.5  # reference lambda_list: weight of ListMLE + its regression
    w_pair: float = 1.0  # reference lambda_pair: weight of BPR + its regression
    w_reg: float = 0.1  # reference point_loss_weight: regression within each side
    lr: float = 3e-3  # reference 1e-3 with minibatches (ours full batch)
    weight_decay: float = 0.01  # AdamW's default: the reference builds AdamW(params, lr) without its config's 1e-4
    max_grad_norm: float = 5.0  # reference JointCriterion.clip_grads
    steps: int = 300
    use_text: bool = True  # ablation switch: False feeds zeros for card and description embeddings
    use_prior: bool = True  # ablation switch: False drops the family/size prior term


def name_tokens(name: str) -> list[str]:
    """Lower-case tokens of a model name split at ``-_/.``, without serial numbers (4+ digits)."""
    return [t for t in re.split(r"[-_/.\s]+", name.lower()) if t and not re.fullmatch(r"\d{4,}", t)]


def _hash(token: str, n: int) -> int:
    return zlib.crc32(token.encode()) % n


class ModelLensNet(nn.Module):
    def __init__(
        self, cfg: ModelLensConfig, n_models: int, n_groups: int, n_metrics: int, n_families: int, text_dim: int
    ) -> None:
        super().__init__()
        e = cfg.emb_dim
        self.model_id = nn.Embedding(n_models + 1, e)  # row 0: unknown
        self.group_id = nn.Embedding(n_groups + 1, e)
        self.token = nn.EmbeddingBag(cfg.n_hash, e, mode="mean")
        self.card = nn.Linear(text_dim, e)  # frozen text in, learned projection
        self.desc = nn.Linear(text_dim, e)
        self.metric = nn.Embedding(n_metrics, e)
        self.family = nn.Embedding(n_families, e)
        self.size = nn.Linear(1, e)
        self.backbone = nn.Sequential(
            nn.Linear(8 * e, cfg.hidden), nn.ReLU(), nn.Linear(cfg.hidden, cfg.hidden), nn.ReLU()
        )
        self.rank_head = nn.Linear(cfg.hidden, 1)
        self.point_head = nn.Linear(cfg.hidden, 1)
        self.prior_head = nn.Linear(2 * e, 1)  # family and size only
        self.tau = nn.Parameter(torch.tensor(1.0))

    def model_vec(self, ids, tok, tok_off, card, family, log_size):
        """(M, 5e): ID, name tokens, card text, family, size."""
        return torch.cat(
            [
                self.model_id(ids),
                self.token(tok, tok_off),
                self.card(card),
                self.family(family),
                self.size(log_size[:, None]),
            ],
            -1,
        )

    def prior(self, family, log_size):
        return self.prior_head(torch.cat([self.family(family), self.size(log_size[:, None])], -1)).squeeze(-1)

    def group_vec(self, ids, desc, metric):
        return torch.cat([self.group_id(ids), self.desc(desc), self.metric(metric)], -1)  # (G, 3e)

    def forward(self, hm, hg, prior_m):
        """hm (B, 5e), hg (B, 3e), prior_m (B,) -> ranking scores s (B,) and pointwise z (B,)."""
        h = self.backbone(torch.cat([hm, hg], -1))
        s = (self.rank_head(h).squeeze(-1) + prior_m) / self.tau.clamp(min=1e-3)
        return s, self.point_head(h).squeeze(-1)


def _token_tensors(tokens: list[list[str]], n_hash: int):
    flat, offsets = [], []
    for toks in tokens:
        offsets.append(len(flat))
        flat.extend(_hash(t, n_hash) for t in (toks or ["<none>"]))
    return torch.tensor(flat, dtype=torch.long), torch.tensor(offsets, dtype=torch.long)


def _padded_groups(problem: RecProblem):
    L = max(len(ms) for _, ms, _ in problem.train)
    G = len(problem.train)
    gid = torch.tensor([g for g, _, _ in problem.train])
    idx = torch.zeros(G, L, dtype=torch.long)
    y = torch.zeros(G, L)
    mask = torch.zeros(G, L, dtype=torch.bool)
    for i, (_, ms, vals) in enumerate(problem.train):
        idx[i, : len(ms)], y[i, : len(ms)], mask[i, : len(ms)] = torch.as_tensor(ms), torch.as_tensor(vals), True
    return gid, idx, y, mask


def listmle(s: torch.Tensor, y: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """ListMLE (Xia et al. 2008) of scores ``s`` in the order of targets ``y``, (G, L) padded.

    The reference's ``ListwisePointwiseLoss``: with a group's candidates sorted best first,
    ``mean_i [log sum_{j >= i} exp(s_j) - s_i]`` over its positions (the last one contributes 0),
    then the mean over groups. Tied targets keep their index order (a stable sort)."""
    neg = torch.finfo(s.dtype).min / 4
    order = torch.sort(y.masked_fill(~mask, float("-inf")), dim=-1, descending=True, stable=True).indices
    s_sorted, m_sorted = s.gather(-1, order), mask.gather(-1, order)
    log_den = torch.logcumsumexp(s_sorted.masked_fill(~m_sorted, neg).flip(-1), -1).flip(-1)  # log sum_{j >= i}
    per_pos = torch.where(m_sorted, log_den - s_sorted, torch.zeros_like(s_sorted))
    return (per_pos.sum(-1) / m_sorted.sum(-1).clamp(min=1)).mean()


def ranking_losses(s: torch.Tensor, z: torch.Tensor, y: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """The reference's four loss terms of scores ``s`` and pointwise predictions ``z`` against the
    standardised targets ``y``, (G, L) padded.

    - ``listwise``: :func:`listmle`; ``list_mse``: the mean squared error of ``z`` over every candidate
      (the listwise side's regression, ``F.mse_loss(z_pred, values)``).
    - ``pairwise``: BPR, ``softplus(-(s_i - s_j))`` averaged over every pair with ``y_i > y_j`` in a
      group (the reference samples such pairs in batches; here every pair, weight 1);
      ``pair_mse``: ``(z_i - y_i)^2 + (z_j - y_j)^2`` averaged over the same pairs (the regression
      on each side of a pair, ``PairwisePointwiseLoss``).
    """
    listwise = listmle(s, y, mask)
    sq = (z - y) ** 2
    list_mse = (sq * mask).sum() / mask.sum()
    better = (y[:, :, None] > y[:, None, :]) & mask[:, :, None] & mask[:, None, :]  # (G, L, L): y_i > y_j
    n_pairs = better.sum().clamp(min=1)
    pairwise = (F.softplus(s[:, None, :] - s[:, :, None]) * better).sum() / n_pairs  # softplus(s_j - s_i)
    pair_mse = ((sq[:, :, None] + sq[:, None, :]) * better).sum() / n_pairs
    return listwise, list_mse, pairwise, pair_mse


def modellens_loss(
    s: torch.Tensor, z: torch.Tensor, y: torch.Tensor, mask: torch.Tensor, cfg: ModelLensConfig
) -> torch.Tensor:
    """``w_list (ListMLE + w_reg MSE) + w_pair (BPR + w_reg MSE on each side)``: the reference's
    ``JointCriterion`` of ``ListwisePointwiseLoss`` and ``PairwisePointwiseLoss``."""
    listwise, list_mse, pairwise, pair_mse = ranking_losses(s, z, y, mask)
    return cfg.w_list * (listwise + cfg.w_reg * list_mse) + cfg.w_pair * (pairwise + cfg.w_reg * pair_mse)


def _prior(net: ModelLensNet, inputs: dict) -> torch.Tensor:
    prior = net.prior(inputs["family"], inputs["log_size"])
    return prior if inputs["use_prior"] else torch.zeros_like(prior)


def train_modellens(problem: RecProblem, cfg: ModelLensConfig, seed: int) -> tuple[ModelLensNet, dict, list[float]]:
    """Fit ModelLens on ``problem.train``; return the net, its inputs and the loss curve."""
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    M, G = problem.n_models, problem.n_groups
    seen_m, seen_g = np.flatnonzero(problem.model_seen), np.flatnonzero(problem.group_seen)
    mid = np.zeros(M, dtype=np.int64)
    mid[seen_m] = 1 + np.arange(seen_m.size)
    gidx = np.zeros(G, dtype=np.int64)
    gidx[seen_g] = 1 + np.arange(seen_g.size)
    n_fam = int(problem.model_family.max()) + 1
    tok, tok_off = _token_tensors(problem.model_tokens, cfg.n_hash)
    inputs = {
        "mid": torch.as_tensor(mid),
        "gid": torch.as_tensor(gidx),
        "tok": tok,
        "tok_off": tok_off,
        "card": torch.as_tensor(problem.model_text, dtype=torch.float32) * float(cfg.use_text),
        "desc": torch.as_tensor(problem.group_text, dtype=torch.float32) * float(cfg.use_text),
        "use_prior": cfg.use_prior,
        "metric": torch.as_tensor(problem.group_metric, dtype=torch.long),
        "family": torch.as_tensor(problem.model_family, dtype=torch.long),
        "log_size": torch.as_tensor(problem.model_log_size, dtype=torch.float32),
    }
    net = ModelLensNet(cfg, M, G, int(problem.group_metric.max()) + 1, n_fam, problem.model_text.shape[1])
    opt = torch.optim.AdamW(net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    tg, idx, y, mask = _padded_groups(problem)
    curve = []
    for _ in range(cfg.steps):
        drop_m = torch.rand(M, generator=gen) < cfg.unk_prob  # unknown-token dropout (cold start)
        drop_g = torch.rand(G, generator=gen) < cfg.unk_prob
        hm = net.model_vec(
            inputs["mid"].masked_fill(drop_m, 0),
            inputs["tok"],
            inputs["tok_off"],
            inputs["card"],
            inputs["family"],
            inputs["log_size"],
        )
        hg = net.group_vec(inputs["gid"].masked_fill(drop_g, 0), inputs["desc"], inputs["metric"])
        prior = _prior(net, inputs)
        Gb, L = idx.shape
        s, z = net(hm[idx].reshape(Gb * L, -1), hg[tg].repeat_interleave(L, 0), prior[idx].reshape(-1))
        loss = modellens_loss(s.reshape(Gb, L), z.reshape(Gb, L), y, mask, cfg)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(net.parameters(), cfg.max_grad_norm)
        opt.step()
        curve.append(float(loss.detach()))
    return net, inputs, curve


@torch.no_grad()
def predict_modellens(net: ModelLensNet, inputs: dict) -> np.ndarray:
    """(M, G) scores; unseen models and groups carry the unknown ID (index 0)."""
    net.eval()
    hm = net.model_vec(
        inputs["mid"], inputs["tok"], inputs["tok_off"], inputs["card"], inputs["family"], inputs["log_size"]
    )
    hg = net.group_vec(inputs["gid"], inputs["desc"], inputs["metric"])
    prior = _prior(net, inputs)
    M, G = hm.shape[0], hg.shape[0]
    out = np.empty((M, G), dtype=np.float64)
    for g in range(G):
        out[:, g] = net(hm, hg[g].expand(M, -1), prior)[0].numpy()
    return out


@RECOMMENDERS.register("modellens")
class ModelLens:
    """Registry wrapper: ``RECOMMENDERS.create("modellens", **ModelLensConfig fields)``."""

    def __init__(self, **cfg) -> None:
        self.cfg = cfg

    def fit_predict(self, problem: RecProblem, seed: int) -> np.ndarray:
        net, inputs, self.curve_ = train_modellens(problem, ModelLensConfig(**self.cfg), seed)
        return predict_modellens(net, inputs)
