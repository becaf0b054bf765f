"""Alpha-divergence policy optimisation toward the reward-tilted target of KL-regularised RL.

Reference: "MCPO: Mode-Controlled Policy Optimization" (NeurIPS 2026; abstract only, no public code
found). The target of KL-regularised RL is (E1)

    pi*(y|x) = pi_ref(y|x) exp(r(x, y) / beta) / Z(x).

MCPO fits pi_theta to pi* by an alpha-divergence instead of the reverse KL that PPO / GRPO / RLOO
implicitly use. Convention (Amari's, as in APO, arXiv 2512.22953), with p = pi* and q = pi_theta (E2):

    D_alpha(p || q) = (1 - sum_y p(y)^alpha q(y)^(1 - alpha)) / (alpha (1 - alpha)),

    alpha -> 0:  KL(q || p) = KL(pi_theta || pi*)   reverse KL, mode-seeking (the PPO/GRPO point);
    alpha -> 1:  KL(p || q) = KL(pi* || pi_theta)   forward KL, mode-covering.

Any real alpha is allowed (alpha < 0 seeks modes harder, alpha > 1 covers harder). Its gradient (E3),
with w = pi* / pi_theta,

    grad D_alpha = -(1/alpha) E_{pi_theta}[ w^alpha grad log pi_theta ]
                 = -(1/alpha) E_{pi_theta}[ (w^alpha - 1) grad log pi_theta ]      (E_pi[grad log pi] = 0),

tends to E_{pi_theta}[log(pi_theta / pi*) grad log pi_theta] = grad KL(pi_theta || pi*) as alpha -> 0.
Since log(pi_theta / pi*) = log(pi_theta / pi_ref) - r / beta + log Z, that is -1/beta times the
gradient of E[r] - beta KL(pi_theta || pi_ref): the reverse-KL policy gradient (E4).

Estimators from a group of K samples y_1..y_K ~ mu(.|x) per prompt (mu: the behaviour policy, e.g.
the policy before this round of updates; rho_i = pi_theta(y_i) / mu(y_i)), with the log-target known
up to log Z: u_i = log pi_ref(y_i) + r_i / beta - log pi_theta(y_i):

- ``"is"`` (needs log Z; a check of unbiasedness, not a practical method):
  g = -(1/alpha) (1/K) sum_i rho_i e^{alpha (u_i - log Z)} grad log pi_theta(y_i) (E5), unbiased;
  centred: (e^{alpha(u_i - log Z)} - 1) in place of e^{...}, also unbiased.
- ``"snis"`` (grouped self-normalised, MCPO's practical estimator): wbar_i = rho_i e^{alpha u_i} /
  sum_j rho_j e^{alpha u_j} removes Z (E6): g = -(1/alpha) sum_i wbar_i grad log pi_theta(y_i),
  consistent (K -> infinity) for grad D_alpha / A_alpha, A_alpha = sum_y pi*^alpha pi_theta^(1-alpha)
  > 0: the divergence gradient rescaled per prompt, same stationary points. Baseline-centred (E7):
  g = -(1/alpha) sum_i (wbar_i - rhobar_i) grad log pi_theta(y_i), rhobar_i = rho_i / sum_j rho_j;
  the subtracted term has expectation ~0, and its alpha -> 0 limit is -sum_i rhobar_i (u_i - ubar)
  grad log pi_theta(y_i) (ubar the rho-weighted group mean): on-policy, the group-mean-baseline
  REINFORCE of the KL-penalised reward, divided by beta (E8). The uncentred form has no alpha = 0
  limit (it divides an O(1) noise term by alpha) and refuses alpha = 0.

Each estimator is returned as a surrogate loss whose autograd gradient is the estimate: the
coefficients are detached, the gradient flows only through log pi_theta(y_i).

Choices the paper leaves open (the abstract names the estimator, not its form): the self-normalised
weights include the sample's own weight (no leave-one-out); the centring subtracts the
self-normalised importance weights rhobar (the estimator of E_{pi_theta}[grad log pi] = 0), which
is what makes alpha = 0 the reverse-KL recipe exactly; the group loss is summed over samples and
averaged over groups.
"""

from __future__ import annotations

import torch

__all__ = ["log_tilted_target", "alpha_divergence", "mcpo_advantages", "mcpo_loss", "reverse_kl_pg_loss",
           "ESTIMATORS", "ALPHA_ZERO"]

ESTIMATORS = ("snis", "is")
#: |alpha| below this is treated as the alpha -> 0 limit (E4, E8).
ALPHA_ZERO = 1e-8


def log_tilted_target(ref_logp: torch.Tensor, reward: torch.Tensor, beta: float) -> torch.Tensor:
    """Unnormalised log pi*(y|x) = log pi_ref(y|x) + r(x, y) / beta (E1, without log Z)."""
    if not beta > 0:
        raise ValueError(f"beta (the KL coefficient) must be positive; got {beta}")
    return ref_logp + reward / beta


def alpha_divergence(logp_target: torch.Tensor, logq: torch.Tensor, alpha: float, dim: int = -1) -> torch.Tensor:
    """D_alpha(p || q) of (E2) over a finite support given in full along ``dim`` (normalised logs).

    ``alpha = 0`` gives KL(q || p) (reverse, mode-seeking), ``alpha = 1`` gives KL(p || q) (forward).
    Differentiable in both arguments.
    """
    p, q = logp_target.exp(), logq.exp()
    if abs(alpha) < ALPHA_ZERO:
        return (q * (logq - logp_target)).sum(dim)
    if abs(alpha - 1) < ALPHA_ZERO:
        return (p * (logp_target - logq)).sum(dim)
    mix = torch.logsumexp(alpha * logp_target + (1 - alpha) * logq, dim)
    return (1 - mix.exp()) / (alpha * (1 - alpha))


def _check(alpha: float, estimator: str, centred: bool, log_z) -> None:
    if estimator not in ESTIMATORS:
        raise ValueError(f"estimator must be one of {ESTIMATORS}; got {estimator!r}")
    if estimator == "is" and log_z is None:
        raise ValueError("estimator 'is' needs log_z (the true log-normaliser of pi*)")
    if abs(alpha) < ALPHA_ZERO and not centred:
        raise ValueError("alpha = 0 needs the baseline-centred estimator (centred=True): "
                         "the uncentred one has no limit")


@torch.no_grad()
def mcpo_advantages(logp: torch.Tensor, behaviour_logp: torch.Tensor, log_target: torch.Tensor, alpha: float, *,
                    estimator: str = "snis", centred: bool = True, log_z: torch.Tensor | None = None) -> torch.Tensor:
    """Per-sample coefficients c_i with g = -sum_i c_i grad log pi_theta(y_i) (E5-E8); shape (G, K).

    Parameters
    ----------
    logp, behaviour_logp, log_target : (G, K) tensors
        log pi_theta(y_i), log mu(y_i) and the unnormalised log pi*(y_i) of K samples for G prompts.
    alpha : float
        The divergence dial (E2).
    estimator : "snis" or "is"
        Grouped self-normalised weights (E6, E7) or plain importance weights with the true ``log_z``
        (E5, shape (G,) or (G, 1)).
    centred : bool
        Subtract the baseline (E7 / centred E5).
    """
    _check(alpha, estimator, centred, log_z)
    if logp.dim() != 2 or logp.shape != behaviour_logp.shape or logp.shape != log_target.shape:
        raise ValueError(f"logp, behaviour_logp and log_target must share one (groups, samples) shape; got "
                         f"{tuple(logp.shape)}, {tuple(behaviour_logp.shape)}, {tuple(log_target.shape)}")
    log_rho = logp - behaviour_logp                                         # (G, K)
    u = log_target - logp                                                  # log w + log Z
    k = logp.shape[1]
    if estimator == "is":
        v = u - log_z.reshape(-1, 1)                                         # log w, exact
        rho = log_rho.exp()
        if abs(alpha) < ALPHA_ZERO:
            return rho * v / k                                              # lim (e^{alpha v} - 1) / alpha
        return rho * (torch.expm1(alpha * v) if centred else (alpha * v).exp()) / (alpha * k)
    rhobar = torch.softmax(log_rho, dim=1)                                  # self-normalised IS weights
    if abs(alpha) < ALPHA_ZERO:                                             # E8
        return rhobar * (u - (rhobar * u).sum(1, keepdim=True))
    wbar = torch.softmax(log_rho + alpha * u, dim=1)                        # E6
    return (wbar - rhobar) / alpha if centred else wbar / alpha


def mcpo_loss(logp: torch.Tensor, behaviour_logp: torch.Tensor, log_target: torch.Tensor, alpha: float, *,
              estimator: str = "snis", centred: bool = True, log_z: torch.Tensor | None = None) -> torch.Tensor:
    """Surrogate loss whose gradient is the grouped estimate of grad D_alpha(pi* || pi_theta), averaged over groups.

    ``logp`` carries the graph; the other inputs are data. See :func:`mcpo_advantages`.
    """
    coef = mcpo_advantages(logp.detach(), behaviour_logp, log_target, alpha, estimator=estimator, centred=centred,
                           log_z=log_z)
    return -(coef * logp).sum(1).mean()


def reverse_kl_pg_loss(logp: torch.Tensor, ref_logp: torch.Tensor, reward: torch.Tensor, beta: float) -> torch.Tensor:
    """The reverse-KL recipe, written independently of MCPO: RLOO on the KL-penalised reward.

    Maximises E[r] - beta KL(pi_theta || pi_ref) (Ahmadian et al. 2024, "Back to Basics", arXiv
    2402.14740): R_i = r_i - beta (log pi_theta(y_i) - log pi_ref(y_i)), advantage R_i minus the mean
    of the group's other K - 1 returns, loss -mean_i A_i log pi_theta(y_i). On-policy samples, (G, K).
    """
    if logp.shape[1] < 2:
        raise ValueError("RLOO needs at least two samples per prompt")
    ret = (reward - beta * (logp.detach() - ref_logp))
    k = ret.shape[1]
    loo = (ret.sum(1, keepdim=True) - ret) / (k - 1)
    return -((ret - loo) * logp).mean(1).mean()
