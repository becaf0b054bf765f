"""The statevector simulator and its three gradient methods (repro.quantum)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from repro.quantum import GRADIENTS, AllocationTracker, Ansatz, expval, final_state
from repro.quantum.simulator import apply_cnot, zero_state

C128 = torch.complex128
# Double-precision round-off over a few hundred gate applications is ~1e-14; the bar set for the simulator is 1e-6.
TOL = 1e-6


def _rand(gen, *shape):
    return torch.rand(*shape, generator=gen, dtype=torch.float64) * 2 * math.pi


def test_single_qubit_closed_form():
    # RX(x) then RY(a): Bloch z = cos x cos a; RZ leaves z alone. d<Z>/da = -cos x sin a.
    gen = torch.Generator().manual_seed(0)
    ansatz = Ansatz(1, 1)
    for _ in range(5):
        x, theta = _rand(gen, 4, 1), _rand(gen, 1, 1, 2).requires_grad_(True)
        e = expval(ansatz, x, theta, C128)
        a = theta[0, 0, 0].detach()
        np.testing.assert_allclose(e[:, 0].detach(), torch.cos(x[:, 0]) * torch.cos(a), atol=1e-12)
        (g,) = torch.autograd.grad(e.sum(), theta)
        np.testing.assert_allclose(g[0, 0, 0], (-torch.cos(x[:, 0]) * torch.sin(a)).sum(), atol=1e-12)
        np.testing.assert_allclose(g[0, 0, 1], 0.0, atol=1e-12)


def test_two_qubit_closed_form():
    # After the rotations the state is a product with z_q = cos x_q cos a_q; CNOT(0,1) maps
    # Z_0 -> Z_0 and Z_1 -> Z_0 Z_1, so <Z_0> = z_0 and <Z_1> = z_0 z_1.
    gen = torch.Generator().manual_seed(1)
    ansatz = Ansatz(2, 1)
    x, theta = _rand(gen, 6, 2), _rand(gen, 1, 2, 2)
    e = expval(ansatz, x, theta, C128)
    z = torch.cos(x) * torch.cos(theta[0, :, 0])
    np.testing.assert_allclose(e[:, 0], z[:, 0], atol=1e-12)
    np.testing.assert_allclose(e[:, 1], z[:, 0] * z[:, 1], atol=1e-12)


@pytest.mark.parametrize("control,target", [(0, 1), (1, 0), (0, 2), (2, 1)])
def test_cnot_truth_table(control, target):
    n = 3
    for k in range(2**n):
        bits = [(k >> (n - 1 - q)) & 1 for q in range(n)]  # qubit 0 = most significant bit
        state = torch.zeros(1, 2**n, dtype=C128)
        state[0, k] = 1
        out = apply_cnot(state, control, target, n)
        bits[target] ^= bits[control]
        expected = sum(b << (n - 1 - q) for q, b in enumerate(bits))
        assert int(out[0].abs().argmax()) == expected and float(out[0].abs().sum()) == 1.0


@pytest.mark.parametrize("n", [1, 3, 6, 9])
def test_state_stays_normalised(n):
    gen = torch.Generator().manual_seed(n)
    ansatz = Ansatz(n, 4)
    state = final_state(ansatz, _rand(gen, 5, n), _rand(gen, *ansatz.theta_shape), C128)
    np.testing.assert_allclose(state.abs().pow(2).sum(dim=1), 1.0, atol=1e-12)


def _vjp(method, ansatz, x, theta, w):
    x, theta = x.clone().requires_grad_(True), theta.clone().requires_grad_(True)
    e = GRADIENTS.get(method)(ansatz, x, theta, C128)
    return (e.detach(), *torch.autograd.grad((e * w).sum(), (x, theta)))


@pytest.mark.parametrize("n,layers", [(1, 2), (2, 3), (3, 2), (4, 2), (5, 1), (6, 2)])
def test_backprop_parameter_shift_adjoint_agree(n, layers):
    gen = torch.Generator().manual_seed(10 + n)
    ansatz = Ansatz(n, layers)
    x, theta, w = _rand(gen, 3, n), _rand(gen, *ansatz.theta_shape), torch.randn(3, n, generator=gen, dtype=torch.float64)
    ref = _vjp("backprop", ansatz, x, theta, w)
    for method in ("parameter_shift", "adjoint"):
        for a, b in zip(_vjp(method, ansatz, x, theta, w), ref):
            np.testing.assert_allclose(a, b, atol=TOL, rtol=0)


def test_pennylane_agrees():
    qml = pytest.importorskip("pennylane")
    n, layers = 3, 2
    ansatz = Ansatz(n, layers)
    gen = torch.Generator().manual_seed(3)
    x, theta = _rand(gen, 1, n), _rand(gen, *ansatz.theta_shape)
    dev = qml.device("default.qubit", wires=n)

    @qml.qnode(dev, interface="torch", diff_method="backprop")
    def circuit(xx, th):
        for q in range(n):
            qml.RX(xx[q], wires=q)
        for layer in range(layers):
            for q in range(n):
                qml.RY(th[layer, q, 0], wires=q)
                qml.RZ(th[layer, q, 1], wires=q)
            for q in range(n - 1):
                qml.CNOT(wires=[q, q + 1])
        return [qml.expval(qml.PauliZ(q)) for q in range(n)]

    xx, th = x[0].clone().requires_grad_(True), theta.clone().requires_grad_(True)
    e_pl = torch.stack(circuit(xx, th))
    w = torch.tensor([0.3, -1.1, 0.7], dtype=torch.float64)
    gx_pl, gt_pl = torch.autograd.grad((e_pl * w).sum(), (xx, th))
    for method in ("backprop", "parameter_shift", "adjoint"):
        e, gx, gt = _vjp(method, ansatz, x, theta, w[None])
        np.testing.assert_allclose(e[0], e_pl.detach(), atol=1e-10)
        np.testing.assert_allclose(gx[0], gx_pl, atol=1e-10)
        np.testing.assert_allclose(gt, gt_pl, atol=1e-10)


def test_allocation_tracker_measures_a_planted_allocation():
    with AllocationTracker() as tracker:
        a = torch.zeros(1000, dtype=torch.float64)  # 8000 bytes
        b = a + 1  # another 8000
        del a, b
        c = torch.ones(10, dtype=torch.float64)
    assert tracker.peak_bytes >= 16000 and tracker.max_alloc_bytes == 8000
    assert tracker.live_bytes == c.numel() * 8


@pytest.mark.parametrize("method", ["backprop", "parameter_shift", "adjoint"])
def test_update_memory_is_order_2_to_the_n(method):
    # The largest tensor an update allocates is one batch of states, B * 2**n amplitudes, never a
    # 2**n x 2**n matrix. Peak memory per two extra qubits grows ~4x for adjoint and parameter
    # shift (a fixed number of states) and ~4 (n+2)/n <= 5.4x for backprop (it stores one state per
    # gate, and there are O(n L) gates), against 16x for O(4**n): 8 separates the two.
    batch, layers = 2, 2
    peaks = {}
    for n in (6, 8, 10):
        ansatz = Ansatz(n, layers)
        x = torch.rand(batch, n, dtype=torch.float64)
        theta = torch.rand(ansatz.theta_shape, dtype=torch.float64, requires_grad=True)
        with AllocationTracker() as tracker:
            GRADIENTS.get(method)(ansatz, x, theta, C128).sum().backward()
        assert tracker.max_alloc_numel <= batch * 2**n < 4**n
        peaks[n] = tracker.peak_bytes
    assert peaks[8] / peaks[6] < 8 and peaks[10] / peaks[8] < 8
    if method == "adjoint":  # psi, lambda, G psi and a temporary: a handful of states
        assert peaks[10] <= 8 * batch * 2**10 * 16


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="n_qubits"):
        Ansatz(0, 1)
    ansatz = Ansatz(3, 1)
    with pytest.raises(ValueError, match="x must be"):
        expval(ansatz, torch.zeros(2, 4), torch.zeros(ansatz.theta_shape))
    with pytest.raises(ValueError, match="theta must be"):
        GRADIENTS.get("adjoint")(ansatz, torch.zeros(2, 3), torch.zeros(2, 3, 2))
    with pytest.raises(ValueError, match="unknown circuit gradient method"):
        GRADIENTS.get("finite_difference")
    with pytest.raises(ValueError, match="CNOT"):
        apply_cnot(zero_state(1, 2), 1, 1, 2)
