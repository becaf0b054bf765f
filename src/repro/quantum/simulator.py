"""A batched statevector simulator in torch for the hardware-efficient ansatz.

The circuit on ``n`` qubits, for a batch of ``B`` inputs ``x`` (B, n) and shared parameters
``theta`` (L, n, 2)::

    |0>^n -> prod_q RX(x_q) -> [ prod_q RZ(theta[l,q,1]) RY(theta[l,q,0]) -> CNOT(0,1) CNOT(1,2) ... CNOT(n-2,n-1) ]_{l=1..L}
          -> <Z_q> for every qubit q

with ``RX(a) = exp(-i a X / 2)``, ``RY(a) = exp(-i a Y / 2)``, ``RZ(a) = exp(-i a Z / 2)`` (the
PennyLane / Qiskit convention). Qubit 0 is the most significant bit of the basis index, as in
PennyLane's ``default.qubit``.

Memory: the state is a (B, 2**n) complex tensor. A gate on qubit ``q`` views it as
(B, 2**q, 2, 2**(n-q-1)) and combines the two slices of the middle axis (a contraction of one
axis with a 2x2 matrix); a CNOT flips the target axis of the control=1 slice of the
(B, 2, ..., 2) view. No 2**n x 2**n matrix is ever formed, so a gate allocates O(B 2**n).

Every function here is plain differentiable torch: autograd backpropagation through the simulator
is the ``backprop`` gradient (see :mod:`repro.quantum.gradients` for parameter shift and adjoint).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import torch

__all__ = ["Ansatz", "Op", "zero_state", "encode", "apply_rotation", "apply_pauli", "apply_cnot",
           "apply_op", "run", "final_state", "expval_z", "z_signs", "REAL_DTYPE"]

#: the real dtype of the angles that goes with each complex state dtype
REAL_DTYPE = {torch.complex64: torch.float32, torch.complex128: torch.float64}


class Op(NamedTuple):
    """One gate of the circuit.

    ``kind`` is ``"rx" | "ry" | "rz" | "cnot"``; ``wires`` the qubit(s) (control, target for a
    CNOT); ``source`` where the angle comes from: ``("x", q)`` an input angle (one per sample),
    ``("theta", l, q, j)`` a trainable parameter, ``None`` for a CNOT.
    """

    kind: str
    wires: tuple[int, ...]
    source: tuple | None


@dataclass(frozen=True)
class Ansatz:
    """The hardware-efficient ansatz: R_x angle encoding, L layers of RY, RZ and a CNOT ladder.

    Parameters
    ----------
    n_qubits : number of qubits ``n`` (>= 1).
    n_layers : number of variational layers ``L`` (>= 1).
    """

    n_qubits: int
    n_layers: int

    def __post_init__(self):
        if self.n_qubits < 1 or self.n_layers < 1:
            raise ValueError(f"Ansatz needs n_qubits >= 1 and n_layers >= 1, got {self.n_qubits}, {self.n_layers}")

    @property
    def theta_shape(self) -> tuple[int, int, int]:
        return (self.n_layers, self.n_qubits, 2)

    @property
    def n_params(self) -> int:
        return 2 * self.n_layers * self.n_qubits

    def ops(self) -> list[Op]:
        """The gate list in application order (the adjoint sweep walks it backwards)."""
        n = self.n_qubits
        ops = [Op("rx", (q,), ("x", q)) for q in range(n)]
        for layer in range(self.n_layers):
            for q in range(n):
                ops.append(Op("ry", (q,), ("theta", layer, q, 0)))
                ops.append(Op("rz", (q,), ("theta", layer, q, 1)))
            ops.extend(Op("cnot", (q, q + 1), None) for q in range(n - 1))
        return ops

    def random_theta(self, generator: torch.Generator, dtype=torch.float64) -> torch.Tensor:
        """Parameters drawn i.i.d. from U[0, 2 pi) (the usual barren-plateau initialisation)."""
        return torch.rand(self.theta_shape, generator=generator, dtype=dtype) * (2 * math.pi)


def _split(state: torch.Tensor, q: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The amplitudes with qubit ``q`` in |0> and in |1>: two (B, 2**q, 2**(n-q-1)) views."""
    batch, dim = state.shape
    s = state.reshape(batch, 2**q, 2, dim // 2 ** (q + 1))
    return s[:, :, 0], s[:, :, 1]


def _join(a0: torch.Tensor, a1: torch.Tensor) -> torch.Tensor:
    out = torch.stack((a0, a1), dim=2)  # (B, 2**q, 2, 2**(n-q-1))
    return out.reshape(out.shape[0], -1)


def zero_state(batch: int, n_qubits: int, dtype=torch.complex128, device=None) -> torch.Tensor:
    """|0...0> for a batch: (B, 2**n)."""
    state = torch.zeros(batch, 2**n_qubits, dtype=dtype, device=device)
    state[:, 0] = 1
    return state


def _angle_column(angle: torch.Tensor, batch: int) -> torch.Tensor:
    """A scalar angle, or one per sample, shaped to broadcast over (B, 2**q, 2**(n-q-1))."""
    return angle.reshape(-1, 1, 1) if angle.dim() > 0 else angle


def apply_rotation(state: torch.Tensor, kind: str, q: int, angle: torch.Tensor, *, inverse: bool = False) -> torch.Tensor:
    """Apply ``RX/RY/RZ(angle)`` (or its inverse) to qubit ``q``; ``angle`` scalar or (B,).

    Implements the 2x2 contraction on one axis of the (B, 2, ..., 2) state.
    """
    if inverse:
        angle = -angle
    half = _angle_column(angle, state.shape[0]) / 2
    c, s = torch.cos(half).to(state.dtype), torch.sin(half).to(state.dtype)
    a0, a1 = _split(state, q)
    if kind == "rx":  # [[c, -i s], [-i s, c]]
        return _join(c * a0 - 1j * s * a1, c * a1 - 1j * s * a0)
    if kind == "ry":  # [[c, -s], [s, c]]
        return _join(c * a0 - s * a1, s * a0 + c * a1)
    if kind == "rz":  # diag(e^{-i a/2}, e^{i a/2}) = diag(c - i s, c + i s)
        return _join((c - 1j * s) * a0, (c + 1j * s) * a1)
    raise ValueError(f"unknown rotation {kind!r}; known: rx, ry, rz")


def apply_pauli(state: torch.Tensor, kind: str, q: int) -> torch.Tensor:
    """Apply the generator of ``kind`` (X for rx, Y for ry, Z for rz) to qubit ``q``."""
    a0, a1 = _split(state, q)
    if kind == "rx":
        return _join(a1, a0)
    if kind == "ry":  # [[0, -i], [i, 0]]
        return _join(-1j * a1, 1j * a0)
    if kind == "rz":
        return _join(a0, -a1)
    raise ValueError(f"unknown rotation {kind!r}; known: rx, ry, rz")


def apply_cnot(state: torch.Tensor, control: int, target: int, n_qubits: int) -> torch.Tensor:
    """CNOT: flip qubit ``target`` in the control=|1> half of the (B, 2, ..., 2) view (self-inverse)."""
    if control == target:
        raise ValueError(f"CNOT needs two different wires, got {control}, {target}")
    view = state.reshape(state.shape[0], *([2] * n_qubits))
    # after selecting the control axis, the target axis index shifts down by one if it came after it
    t_axis = 1 + target - (1 if target > control else 0)
    half0 = view.select(control + 1, 0)
    half1 = view.select(control + 1, 1).flip(t_axis)
    return torch.stack((half0, half1), dim=control + 1).reshape(state.shape)


def _angle(op: Op, x: torch.Tensor, theta: torch.Tensor) -> torch.Tensor:
    if op.source[0] == "x":
        return x[:, op.source[1]]
    return theta[op.source[1:]]


def apply_op(state: torch.Tensor, op: Op, x: torch.Tensor, theta: torch.Tensor, n_qubits: int, *,
             inverse: bool = False) -> torch.Tensor:
    """Apply one :class:`Op` (or un-apply it with ``inverse=True``)."""
    if op.kind == "cnot":
        return apply_cnot(state, *op.wires, n_qubits)
    return apply_rotation(state, op.kind, op.wires[0], _angle(op, x, theta), inverse=inverse)


def encode(x: torch.Tensor, dtype=torch.complex128) -> torch.Tensor:
    """R_x angle encoding of (B, n) angles applied to |0>^n, as RX gates on the zero state."""
    return run(zero_state(x.shape[0], x.shape[1], dtype, x.device), [Op("rx", (q,), ("x", q)) for q in range(x.shape[1])],
               x, x.new_zeros(0), x.shape[1])


def run(state: torch.Tensor, ops: list[Op], x: torch.Tensor, theta: torch.Tensor, n_qubits: int) -> torch.Tensor:
    for op in ops:
        state = apply_op(state, op, x, theta, n_qubits)
    return state


def _check_inputs(ansatz: Ansatz, x: torch.Tensor, theta: torch.Tensor) -> None:
    if x.dim() != 2 or x.shape[1] != ansatz.n_qubits:
        raise ValueError(f"x must be (batch, {ansatz.n_qubits}); got {tuple(x.shape)}")
    if tuple(theta.shape) != ansatz.theta_shape:
        raise ValueError(f"theta must be {ansatz.theta_shape}; got {tuple(theta.shape)}")


def final_state(ansatz: Ansatz, x: torch.Tensor, theta: torch.Tensor, dtype=torch.complex128) -> torch.Tensor:
    """U(x, theta)|0>: the (B, 2**n) output state (differentiable by autograd)."""
    _check_inputs(ansatz, x, theta)
    state = zero_state(x.shape[0], ansatz.n_qubits, dtype, x.device)
    return run(state, ansatz.ops(), x, theta, ansatz.n_qubits)


def z_signs(n_qubits: int, q: int, dtype=torch.float64, device=None) -> torch.Tensor:
    """The eigenvalues of Z_q on the computational basis, (2**n,): +1 where bit q is 0, else -1."""
    signs = torch.ones(2**q, 2, 2 ** (n_qubits - q - 1), dtype=dtype, device=device)
    signs[:, 1] = -1
    return signs.reshape(-1)


def expval_z(state: torch.Tensor, n_qubits: int) -> torch.Tensor:
    """<Z_q> for every qubit: (B, n), from the marginal probabilities of each qubit."""
    probs = state.real**2 + state.imag**2  # (B, 2**n)
    out = []
    for q in range(n_qubits):
        p = probs.reshape(probs.shape[0], 2**q, 2, -1)
        out.append(p[:, :, 0].sum(dim=(1, 2)) - p[:, :, 1].sum(dim=(1, 2)))
    return torch.stack(out, dim=1)
