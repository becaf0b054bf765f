"""Statevector simulation of the hardware-efficient ansatz and three ways to differentiate it."""

from repro.quantum.gradients import GRADIENTS, adjoint_vjp, expval, parameter_shift_vjp
from repro.quantum.memory import AllocationTracker
from repro.quantum.simulator import Ansatz, expval_z, final_state

__all__ = ["Ansatz", "GRADIENTS", "AllocationTracker", "adjoint_vjp", "expval", "expval_z", "final_state",
           "parameter_shift_vjp"]
