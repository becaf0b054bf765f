"""Three ways to differentiate the circuit's Pauli-Z expectations, registered by name.

Each entry of :data:`GRADIENTS` is a function ``f(ansatz, x, theta, dtype) -> E`` with ``E`` the
(B, n) expectations <Z_q>; ``E`` carries a gradient path to ``x`` (B, n) and ``theta`` (L, n, 2),
so ``loss.backward()`` works the same whatever the method:

- ``backprop``: autograd through every gate of the simulator (stores every intermediate state:
  O(gates * B * 2**n) memory);
- ``parameter_shift``: E(theta + pi/2 e_k) - E(theta - pi/2 e_k) over 2 for each of the P
  parameters and each of the n input angles (2 (P + n) extra forward passes, no stored states;
  Mitarai et al. 2018, Schuld et al. 2019);
- ``adjoint``: the forward pass (under ``no_grad``) keeps only the final state; the backward sweep
  un-applies the gates one by one, carrying |psi> and |lambda> = H|psi> (H = sum_q w_q Z_q with
  w = dLoss/dE), and reads each derivative as Im <lambda| G |psi> (Jones & Gacon 2020,
  arXiv:2009.02823, Algorithm 1). Written by hand, not delegated to autograd; three states alive.
- ``none``: the expectations without any gradient path (what RLQ-Grad needs).
"""

from __future__ import annotations

import math

import torch

from repro.quantum.simulator import (REAL_DTYPE, Ansatz, apply_op, apply_pauli, expval_z, final_state,
                                     z_signs, _check_inputs)
from repro.registry import Registry

__all__ = ["GRADIENTS", "expval", "adjoint_vjp", "parameter_shift_vjp"]

GRADIENTS = Registry("circuit gradient method")


def _as_real(t: torch.Tensor, dtype) -> torch.Tensor:
    return t.to(REAL_DTYPE[dtype])


@GRADIENTS.register("backprop")
def expval(ansatz: Ansatz, x: torch.Tensor, theta: torch.Tensor, dtype=torch.complex128) -> torch.Tensor:
    """<Z_q> (B, n), differentiable by autograd through the simulator (the ``backprop`` method)."""
    x, theta = _as_real(x, dtype), _as_real(theta, dtype)
    return expval_z(final_state(ansatz, x, theta, dtype), ansatz.n_qubits)


@GRADIENTS.register("none")
def expval_no_grad(ansatz: Ansatz, x: torch.Tensor, theta: torch.Tensor, dtype=torch.complex128) -> torch.Tensor:
    """<Z_q> (B, n) with no gradient path (RLQ-Grad never differentiates the circuit)."""
    with torch.no_grad():
        return expval(ansatz, x.detach(), theta.detach(), dtype)


# --------------------------------------------------------------------------------------------
# parameter shift
# --------------------------------------------------------------------------------------------
SHIFT = math.pi / 2  # exact for gates exp(-i a P / 2) with P a Pauli (eigenvalues +-1/2 of the generator)


@torch.no_grad()
def parameter_shift_vjp(ansatz: Ansatz, x: torch.Tensor, theta: torch.Tensor, grad_e: torch.Tensor,
                        dtype=torch.complex128) -> tuple[torch.Tensor, torch.Tensor]:
    """Vector-Jacobian products of E(x, theta) with ``grad_e`` (B, n) by the parameter-shift rule.

    Returns (grad_x (B, n), grad_theta (L, n, 2)); the shifted circuits run one at a time, so the
    memory is that of one forward pass.
    """
    n = ansatz.n_qubits

    def e(xx, tt):
        return expval_z(final_state(ansatz, xx, tt, dtype), n)

    grad_theta = torch.zeros_like(theta)
    flat = grad_theta.view(-1)
    for k in range(theta.numel()):
        plus, minus = theta.clone(), theta.clone()
        plus.view(-1)[k] += SHIFT
        minus.view(-1)[k] -= SHIFT
        flat[k] = (grad_e * (e(x, plus) - e(x, minus))).sum() / 2
    # an input angle belongs to one sample, so shifting column q of every sample at once gives
    # every sample's derivative in one pair of passes
    grad_x = torch.zeros_like(x)
    for q in range(n):
        plus, minus = x.clone(), x.clone()
        plus[:, q] += SHIFT
        minus[:, q] -= SHIFT
        grad_x[:, q] = (grad_e * (e(plus, theta) - e(minus, theta))).sum(dim=1) / 2
    return grad_x, grad_theta


class _ParameterShiftExpval(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, theta, ansatz, dtype):
        ctx.ansatz, ctx.dtype = ansatz, dtype
        ctx.save_for_backward(x, theta)  # only the angles: backward re-runs shifted circuits
        with torch.no_grad():
            return expval_z(final_state(ansatz, x, theta, dtype), ansatz.n_qubits)

    @staticmethod
    def backward(ctx, grad_e):
        x, theta = ctx.saved_tensors
        grad_x, grad_theta = parameter_shift_vjp(ctx.ansatz, x, theta, grad_e, ctx.dtype)
        return grad_x, grad_theta, None, None


@GRADIENTS.register("parameter_shift")
def expval_parameter_shift(ansatz: Ansatz, x: torch.Tensor, theta: torch.Tensor, dtype=torch.complex128) -> torch.Tensor:
    """<Z_q> (B, n) whose backward pass uses the parameter-shift rule."""
    _check_inputs(ansatz, x, theta)
    return _ParameterShiftExpval.apply(_as_real(x, dtype), _as_real(theta, dtype), ansatz, dtype)


# --------------------------------------------------------------------------------------------
# adjoint differentiation
# --------------------------------------------------------------------------------------------
@torch.no_grad()
def adjoint_vjp(ansatz: Ansatz, state: torch.Tensor, x: torch.Tensor, theta: torch.Tensor,
                grad_e: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Adjoint differentiation from the final ``state`` (B, 2**n) only.

    With H_b = sum_q grad_e[b, q] Z_q, dLoss/dangle_k = sum_b 2 Re <psi_b| H_b dU/dangle_k ...> =
    sum_b Im <lambda_k,b| G_k |psi_k,b>, where psi_k and lambda_k are the state and the
    back-propagated H|psi> right after gate k, and G_k its Pauli generator (U = exp(-i a G / 2)).
    Walks the gates backwards, un-applying each to both states (Jones & Gacon 2020, Alg. 1).

    Returns (grad_x (B, n), grad_theta (L, n, 2)).
    """
    n = ansatz.n_qubits
    real = grad_e.dtype
    h = torch.zeros(state.shape, dtype=real, device=state.device)  # diagonal of H_b, (B, 2**n)
    for q in range(n):
        h += grad_e[:, q:q + 1] * z_signs(n, q, real, state.device)
    psi, lam = state, h * state
    grad_x = torch.zeros_like(x)
    grad_theta = torch.zeros_like(theta)
    for op in reversed(ansatz.ops()):
        if op.kind != "cnot":
            g_psi = apply_pauli(psi, op.kind, op.wires[0])
            per_sample = (lam.conj() * g_psi).sum(dim=1).imag  # (B,)
            if op.source[0] == "x":
                grad_x[:, op.source[1]] = per_sample
            else:
                grad_theta[op.source[1:]] = per_sample.sum()
        psi = apply_op(psi, op, x, theta, n, inverse=True)
        lam = apply_op(lam, op, x, theta, n, inverse=True)
    return grad_x, grad_theta


class _AdjointExpval(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, theta, ansatz, dtype):
        ctx.ansatz = ansatz
        with torch.no_grad():
            state = final_state(ansatz, x, theta, dtype)  # the only state kept for backward
        ctx.save_for_backward(x, theta, state)
        return expval_z(state, ansatz.n_qubits)

    @staticmethod
    def backward(ctx, grad_e):
        x, theta, state = ctx.saved_tensors
        grad_x, grad_theta = adjoint_vjp(ctx.ansatz, state, x, theta, grad_e)
        return grad_x, grad_theta, None, None


@GRADIENTS.register("adjoint")
def expval_adjoint(ansatz: Ansatz, x: torch.Tensor, theta: torch.Tensor, dtype=torch.complex128) -> torch.Tensor:
    """<Z_q> (B, n) whose backward pass is adjoint differentiation."""
    _check_inputs(ansatz, x, theta)
    return _AdjointExpval.apply(_as_real(x, dtype), _as_real(theta, dtype), ansatz, dtype)
