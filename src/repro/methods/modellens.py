"""ModelLens: a performance-aware latent space over (model, dataset, metric) for model recommendation.

"ModelLens: Finding the Best for Your Task from Myriads of Models" (arXiv 2605.07075); architecture
read from luisrui/ModelLens (commit 009e4c1), our own code.

Score of model m in group g (a (dataset, metric) pair)::

    h_m = [E_id(m), mean_t E_tok(hash(t)) over name tokens, P_card(card_m), E_fam(f_m), P_size(log size_m)]
    h_g = [E_gid(g), P_desc(desc_g), E_metric(metric_g)]
    h = backbone([h_m, h_g])                                   # 2-layer ReLU MLP
    s(m, g) = (w_rank . h + prior([E_fam(f_m), P_size(log size_m)])) / max(tau, 1e-3)   # tau learnable
    z(m, g) = w_point . h                                      # pointwise head (regression)

Loss per group with training records (values standardised within the group, higher is better):
``w_list * ListNet(s) + w_pair * pairwise logistic(s) + w_reg * MSE(z)``, weights 0.5, 1.0, 0.1 as in
the reference's final config (lambda_list, lambda_pair, point_loss_weight). Cold start: in training each model and group ID is replaced by the unknown
token with probability ``unk_prob`` (10%); an unseen model or group is scored with the unknown ID,
i.e. from its name tokens, text and metadata alone.

Ablations (switches of :class:`ModelLensConfig`, each one part removed, everything else equal):
``use_text=False`` feeds zero vectors in place of the frozen card and description embeddings (their
projections reduce to constant biases); ``use_prior=False`` drops the family/size prior term;
``w_list``, ``w_pair`` or ``w_reg`` set to 0 removes that loss; ``unk_prob=0`` removes the
unknown-token dropout (the unknown rows are then never trained, so a cold start falls back on
untrained embeddings).

Choices the paper leaves open
- Sizes (embedding 32, hidden 128, 2 hidden layers), Adam 3e-3 (reference 1e-3 with minibatches),
  weight decay 1e-4 (reference), full-batch steps: set in config; chosen small for a CPU.
- Name tokens: the name split at ``-_/.``; serial numbers (4+ digits) are not tokens.
- Directions: values turned higher-is-better per metric before standardising (the reference has
  no direction field).

Deviations
- Text features: all-MiniLM-L6-v2 (384-d, offline package) instead of 1536-d API embeddings.
- Training runs full batch over all training groups at each step (small synthetic leaderboards);
  no early stopping (the reference stops after 20 epochs without validation gain).
- Size enters as a learned projection of log2(size), not the reference's 20 size buckets; no task
  embedding (our datasets' task is a function of their description); no dropout in the MLP;
  ListNet as the listwise loss and a logistic pairwise loss (the reference's exact forms not checked).
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

__all__ = ["ModelLensConfig", "ModelLensNet", "name_tokens", "train_modellens", "ModelLens"]


@dataclass(frozen=True)
class ModelLensConfig:
    emb_dim: int = 32  # each ID / token / text projection
    hidden: int = 128  # MLP width (2 hidden layers)
    n_hash: int = 1024  # buckets of hashed name tokens
    unk_prob: float = 0.1  # ID -> unknown token in training (reference: 10%)
    w_list: float = 0.5  # reference lambda_list
    w_pair: float = 1.0  # reference lambda_pair
    w_reg: float = 0.1  # reference point_loss_weight
    lr: float = 3e-3
    weight_decay: float = 1e-4
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


def ranking_losses(s: torch.Tensor, z: torch.Tensor, y: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """ListNet and pairwise logistic losses of scores ``s`` and the MSE of ``z`` against targets ``y``, (G, L) padded."""
    neg = torch.finfo(s.dtype).min / 4
    log_p = F.log_softmax(s.masked_fill(~mask, neg), -1)
    target = F.softmax(y.masked_fill(~mask, neg), -1)
    listwise = -(target * log_p).masked_fill(~mask, 0.0).sum(-1).mean()
    better = (y[:, :, None] > y[:, None, :]) & mask[:, :, None] & mask[:, None, :]  # (G, L, L)
    pair = F.softplus(s[:, None, :] - s[:, :, None])  # s_j - s_i
    pairwise = (pair * better).sum() / better.sum().clamp(min=1)
    regression = ((z - y) ** 2 * mask).sum() / mask.sum()
    return listwise, pairwise, regression


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
    opt = torch.optim.Adam(net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
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
        lw, pw, rg = ranking_losses(s.reshape(Gb, L), z.reshape(Gb, L), y, mask)
        loss = cfg.w_list * lw + cfg.w_pair * pw + cfg.w_reg * rg
        opt.zero_grad()
        loss.backward()
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
