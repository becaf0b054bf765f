"""Exact solutions of finite discounted MDPs, batched over kernels.

Conventions: ``S`` states, ``A`` actions. A kernel ``P`` has shape ``(..., S, A, S)`` with
``P[..., s, a, t] = P(t | s, a)``; rewards ``R`` have shape ``(S, A)`` (or broadcast against the
batch); a policy ``pi`` has shape ``(..., S, A)`` with rows summing to one. Leading batch dimensions
are carried through every function, so a stack of bootstrap kernels is solved in one call.

Equations (Puterman 1994, ch. 6):

- policy evaluation: ``V^pi = (I - gamma P_pi)^{-1} r_pi`` with ``P_pi[s, t] = sum_a pi(a|s) P(t|s,a)``
  and ``r_pi[s] = sum_a pi(a|s) R(s,a)``; ``Q^pi(s,a) = R(s,a) + gamma sum_t P(t|s,a) V^pi(t)``;
- Bellman optimality ``V*(s) = max_a R(s,a) + gamma sum_t P(t|s,a) V*(t)``, solved by value iteration
  (contraction, stopped at sup-norm error ``tol``) or by policy iteration (exact after finitely many
  improvements);
- derivative of a value with respect to the kernel: ``d V^pi(x) / d P(t|s,a) = gamma M[x,s] pi(a|s)
  V^pi(t)`` with ``M = (I - gamma P_pi)^{-1}``. For ``V*`` and ``Q*`` with a unique optimal policy the
  envelope theorem gives the same formula with ``pi = pi*`` (the Hadamard derivative of the Bellman
  optimality operator at a kernel whose optimal action is unique in every state).
"""

from __future__ import annotations

import logging

import numpy as np

__all__ = ["policy_kernel", "policy_evaluation", "value_iteration", "policy_iteration", "greedy_policy",
           "value_gradient", "q_gradient"]

log = logging.getLogger(__name__)


def _check(P: np.ndarray, R: np.ndarray, gamma: float) -> tuple[np.ndarray, np.ndarray]:
    P = np.asarray(P, dtype=float)
    R = np.asarray(R, dtype=float)
    if P.ndim < 3 or P.shape[-1] != P.shape[-3]:
        raise ValueError(f"kernel P must have shape (..., S, A, S); got {P.shape}")
    if R.shape[-2:] != P.shape[-3:-1]:
        raise ValueError(f"rewards R must have shape (S, A) = {P.shape[-3:-1]}; got {R.shape}")
    if not 0.0 <= gamma < 1.0:
        raise ValueError(f"discount gamma must lie in [0, 1); got {gamma}")
    if not np.allclose(P.sum(-1), 1.0, atol=1e-8):
        raise ValueError("kernel P: every row P(.|s,a) must sum to one")
    return P, R


def policy_kernel(P: np.ndarray, pi: np.ndarray) -> np.ndarray:
    """``P_pi[..., s, t] = sum_a pi(a|s) P(t|s,a)``; shape ``(..., S, S)``."""
    return np.einsum("...sa,...sat->...st", pi, P)


def policy_evaluation(P: np.ndarray, R: np.ndarray, pi: np.ndarray, gamma: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact ``V^pi`` and ``Q^pi`` by solving the linear Bellman system.

    Parameters
    ----------
    P : array (..., S, A, S)
        Transition kernel(s).
    R : array (S, A)
        Expected rewards.
    pi : array (S, A) or (..., S, A)
        Policy; rows sum to one.
    gamma : float
        Discount factor in [0, 1).

    Returns
    -------
    V : array (..., S)
    Q : array (..., S, A)
    """
    P, R = _check(P, R, gamma)
    pi = np.asarray(pi, dtype=float)
    S = P.shape[-1]
    P_pi = policy_kernel(P, pi)  # (..., S, S)
    r_pi = (np.broadcast_to(pi, P.shape[:-1]) * R).sum(-1)  # (..., S)
    V = np.linalg.solve(np.eye(S) - gamma * P_pi, r_pi[..., None])[..., 0]
    Q = R + gamma * np.einsum("...sat,...t->...sa", P, V)
    return V, Q


def greedy_policy(Q: np.ndarray) -> np.ndarray:
    """Deterministic greedy policy of ``Q`` as a one-hot array ``(..., S, A)`` (ties: lowest action)."""
    Q = np.asarray(Q)
    return np.eye(Q.shape[-1])[np.argmax(Q, axis=-1)]


def value_iteration(P: np.ndarray, R: np.ndarray, gamma: float, *, tol: float = 1e-10,
                    max_iter: int = 100_000) -> tuple[np.ndarray, np.ndarray, int]:
    """``V*`` and ``Q*`` by value iteration, to sup-norm error at most ``tol`` in every batch element.

    Stops when ``||V_{k+1} - V_k||_inf <= tol (1 - gamma) / gamma`` (then ``||V_{k+1} - V*|| <= tol``).

    Returns
    -------
    V : array (..., S)
    Q : array (..., S, A)
    n_iter : int
    """
    P, R = _check(P, R, gamma)
    V = np.zeros(P.shape[:-2])
    threshold = tol * (1.0 - gamma) / max(gamma, 1e-300)
    for it in range(1, max_iter + 1):
        Q = R + gamma * np.einsum("...sat,...t->...sa", P, V)
        V_new = Q.max(-1)
        delta = np.max(np.abs(V_new - V)) if V.size else 0.0
        V = V_new
        if delta <= threshold:
            Q = R + gamma * np.einsum("...sat,...t->...sa", P, V)
            return V, Q, it
    raise ValueError(f"value_iteration: no convergence to tol={tol} within max_iter={max_iter}")


def policy_iteration(P: np.ndarray, R: np.ndarray, gamma: float, *, max_iter: int = 1000,
                     improve_tol: float = 1e-12) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``V*``, ``Q*`` and an optimal deterministic policy by (Howard) policy iteration, batched.

    An action is switched only when it improves ``Q`` by more than ``improve_tol``, so ties cannot
    make the iteration cycle. Exact up to the linear solves.

    Returns
    -------
    V : array (..., S)
    Q : array (..., S, A)
    pi : array (..., S, A), one-hot
    """
    P, R = _check(P, R, gamma)
    A = P.shape[-2]
    action = np.broadcast_to(np.argmax(R, axis=-1), P.shape[:-2]).copy()  # (..., S)
    eye = np.eye(A)
    for _ in range(max_iter):
        pi = eye[action]
        V, Q = policy_evaluation(P, R, pi, gamma)
        best = np.argmax(Q, axis=-1)
        current = np.take_along_axis(Q, action[..., None], axis=-1)[..., 0]
        switch = Q.max(-1) > current + improve_tol
        if not switch.any():
            return V, Q, pi
        action = np.where(switch, best, action)
    raise ValueError(f"policy_iteration: no convergence within max_iter={max_iter}")


def value_gradient(P: np.ndarray, pi: np.ndarray, V: np.ndarray, gamma: float) -> np.ndarray:
    """Derivative of ``V^pi`` with respect to the kernel.

    ``G[..., x, s, a, t] = d V^pi(x) / d P(t|s,a) = gamma M[x, s] pi(a|s) V^pi(t)`` with
    ``M = (I - gamma P_pi)^{-1}``. Rows of ``P`` are not renormalised: a perturbation ``dP`` of a
    row that sums to zero (the tangent space of the simplex) changes ``V`` by ``sum G dP``.

    Returns
    -------
    G : array (..., S, S, A, S)
    """
    P = np.asarray(P, dtype=float)
    S = P.shape[-1]
    M = np.linalg.inv(np.eye(S) - gamma * policy_kernel(P, pi))  # (..., S, S)
    pi = np.broadcast_to(pi, P.shape[:-1])
    return gamma * np.einsum("...xs,...sa,...t->...xsat", M, pi, V)


def q_gradient(P: np.ndarray, pi: np.ndarray, V: np.ndarray, gamma: float) -> np.ndarray:
    """Derivative of ``Q^pi`` with respect to the kernel.

    ``d Q^pi(x,b) / d P(t|s,a) = gamma [1{(x,b)=(s,a)} V(t) + sum_y P(y|x,b) d V(y) / d P(t|s,a)]``.

    Returns
    -------
    G : array (..., S, A, S, A, S)
    """
    P = np.asarray(P, dtype=float)
    S, A = P.shape[-3], P.shape[-2]
    GV = value_gradient(P, pi, V, gamma)  # (..., y, s, a, t)
    G = gamma * np.einsum("...xby,...ysat->...xbsat", P, GV)
    direct = gamma * np.einsum("xs,ba,...t->...xbsat", np.eye(S), np.eye(A), V)
    return G + direct
