"""RLQ-Grad: a PPO agent that proposes the parameter updates of a quantum neural network.

Paper: "Modeling quantum neural network gradient with reinforcement learning" (arXiv 2609.31066;
only the abstract and secondary summaries were read).

Implemented:
- the hybrid model, PCA -> FC_in -> R_x encoding -> hardware-efficient ansatz (L layers of RY, RZ
  and a CNOT ladder) -> <Z_q> -> FC_out (:class:`HybridQNN`); classical layers trained by Adam
  (lr 1e-3, weight decay 1e-4, cosine schedule), as the summaries state;
- the three gradient baselines (``backprop``, ``parameter_shift``, ``adjoint``; see
  :mod:`repro.quantum.gradients`), whose circuit parameters follow Adam on the exact gradient;
- RLQ-Grad (:class:`RLQGradTrainer`, with the shared :class:`repro.rl.ppo.PPOAgent`): state
  s = [theta, mean loss, mean accuracy, previous update], action g in R^P (Gaussian policy),
  theta <- theta - eta g, reward r = accuracy + 1 / (loss + eps); actor and critic are MLPs whose
  every linear layer is spectrally normalised (``torch.nn.utils.parametrizations.spectral_norm``);
  PPO-clip with GAE (cleanrl's ``ppo_continuous_action.py`` layout). The circuit is never
  differentiated.

Training methods register by name in :data:`METHODS` (the ``{method}`` wildcard). Presets become an
:class:`RLQGradConfig` through :func:`repro.config.from_dict`. The paper's measurements and figures
live in :mod:`repro.papers.rlqgrad`.

Choices the paper leaves open
-----------------------------
- theta enters the state wrapped to (-pi, pi] and divided by pi (angles are periodic); the loss and
  accuracy are the batch means of the step's forward pass.
- The reward of action g_t is read from the next step's forward pass (loss and accuracy at
  theta_{t+1} on the next mini-batch), so an RLQ-Grad step costs one circuit forward pass.
- eps = 0.1 in 1/(loss + eps) (bounds the reward by 11); eta = ``update_scale``; the policy std is
  a learned state-independent vector, exp(-1) at start; PPO: rollout 16 steps, 4 epochs,
  2 minibatches, clip 0.2, gamma 0.99, GAE lambda 0.95, Adam 3e-4, hidden width 64, tanh.
- FC_in under RLQ-Grad: its gradient would have to pass through the circuit, which RLQ-Grad never
  differentiates, so FC_in stays at its random initialisation; FC_out is trained by Adam as in
  every method. The gradient baselines train FC_in through their own circuit gradient (input
  angles are differentiated by the same method).
- Gradient baselines update theta with Adam (``lr_theta``); parameters start i.i.d. U[0, 2 pi).
- Datasets: scikit-learn digits (10 classes) and breast cancer (2 classes), standardised, PCA to
  ``pca_dim`` components fitted on the training split, stratified 80/20 split.

Deviations
----------
- No MNIST / the paper's four benchmarks: digits and breast cancer ship offline.
- A statevector simulator in torch stands in for whatever simulator the paper used; timings are
  CPU timings of this simulator.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from repro.quantum.gradients import GRADIENTS
from repro.quantum.simulator import REAL_DTYPE, Ansatz
from repro.registry import Registry
from repro.rl.ppo import PPOAgent, PPOConfig
from repro.seeding import torch_generator

__all__ = ["RLQGradConfig", "Dataset", "load_dataset", "HybridQNN",
           "GradientTrainer", "RLQGradTrainer", "METHODS", "build_trainer", "train_qnn", "COMPLEX_DTYPES",
           "save_dataset", "read_dataset", "rl_state", "rlqgrad_agent"]

log = logging.getLogger(__name__)

COMPLEX_DTYPES = {"complex64": torch.complex64, "complex128": torch.complex128}


@dataclass(frozen=True)
class RLQGradConfig:
    """Settings of the QNN, its training and the PPO agent (paper values where stated)."""

    n_qubits: int = 12
    """qubits n (the paper's headline: 12)"""
    n_layers: int = 6
    """ansatz depth L (the paper's MNIST result: depth 6)"""
    pca_dim: int = 16
    """PCA components fed to FC_in"""
    batch_size: int = 32
    """mini-batch size of one update"""
    steps: int = 300
    """updates per training run"""
    lr_classical: float = 1e-3
    """Adam learning rate of FC_in / FC_out (paper)"""
    weight_decay: float = 1e-4
    """Adam weight decay of the classical layers (paper)"""
    lr_theta: float = 0.01
    """Adam learning rate of theta for the gradient baselines (our choice)"""
    dtype: str = "complex64"
    """state dtype: complex64 or complex128"""
    update_scale: float = 0.05
    """eta in theta <- theta - eta g (RLQ-Grad)"""
    reward_eps: float = 0.1
    """eps in reward = acc + 1 / (loss + eps)"""
    hidden: int = 64
    """width of the actor and critic MLPs"""
    rollout: int = 16
    """PPO rollout length (updates between two PPO optimisations)"""
    ppo: PPOConfig = PPOConfig()
    """the PPO algorithm's settings (clip, gamma, GAE lambda, epochs, minibatches, Adam lr 3e-4, ...)"""
    val_fraction: float = 0.2
    """held-out fraction of the dataset"""

    @property
    def complex_dtype(self) -> torch.dtype:
        if self.dtype not in COMPLEX_DTYPES:
            raise ValueError(f"dtype must be one of {sorted(COMPLEX_DTYPES)}, got {self.dtype!r}")
        return COMPLEX_DTYPES[self.dtype]

    @property
    def real_dtype(self) -> torch.dtype:
        return REAL_DTYPE[self.complex_dtype]


# --------------------------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Dataset:
    x_train: torch.Tensor
    y_train: torch.Tensor
    x_val: torch.Tensor
    y_val: torch.Tensor
    n_classes: int


def save_dataset(data: Dataset, path) -> None:
    """Write a :class:`Dataset` as an .npz file (atomically)."""
    from repro.io import atomic_path

    with atomic_path(path) as tmp:
        np.savez(tmp, x_train=data.x_train.numpy(), y_train=data.y_train.numpy(), x_val=data.x_val.numpy(),
                 y_val=data.y_val.numpy(), n_classes=data.n_classes)


def read_dataset(path, dtype=torch.float32) -> Dataset:
    """Read a :class:`Dataset` written by :func:`save_dataset` (a damaged file is a ValueError naming it)."""
    from repro.io import load_npz

    f = load_npz(path, ["x_train", "y_train", "x_val", "y_val", "n_classes"])
    return Dataset(torch.as_tensor(f["x_train"], dtype=dtype), torch.as_tensor(f["y_train"]),
                   torch.as_tensor(f["x_val"], dtype=dtype), torch.as_tensor(f["y_val"]), int(f["n_classes"]))


def _sklearn_loader(name: str):
    from sklearn import datasets

    loaders = {"digits": datasets.load_digits, "breast_cancer": datasets.load_breast_cancer}
    if name not in loaders:
        raise ValueError(f"unknown dataset {name!r}; known: {', '.join(sorted(loaders))}")
    return loaders[name]


def load_dataset(name: str, *, pca_dim: int, val_fraction: float = 0.2, seed: int = 0,
                 dtype=torch.float32) -> Dataset:
    """A scikit-learn dataset that ships offline, standardised and reduced by PCA (fit on train).

    Parameters
    ----------
    name : ``"digits"`` (1797 8x8 images, 10 classes) or ``"breast_cancer"`` (569 x 30, 2 classes).
    pca_dim : number of principal components kept (at most the number of features).
    """
    from sklearn.decomposition import PCA
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    x, y = _sklearn_loader(name)(return_X_y=True)
    if not 1 <= pca_dim <= x.shape[1]:
        raise ValueError(f"pca_dim must be in [1, {x.shape[1]}] for {name}, got {pca_dim}")
    x_tr, x_va, y_tr, y_va = train_test_split(x, y, test_size=val_fraction, stratify=y, random_state=seed % 2**32)
    scaler = StandardScaler().fit(x_tr)
    pca = PCA(n_components=pca_dim, random_state=seed % 2**32).fit(scaler.transform(x_tr))
    z_tr, z_va = pca.transform(scaler.transform(x_tr)), pca.transform(scaler.transform(x_va))
    scale = z_tr.std(axis=0) + 1e-12  # unit-variance components: FC_in sees comparable inputs
    as_t = lambda a: torch.as_tensor(a, dtype=dtype)
    return Dataset(as_t(z_tr / scale), torch.as_tensor(y_tr), as_t(z_va / scale), torch.as_tensor(y_va),
                   int(len(np.unique(y))))


# --------------------------------------------------------------------------------------------
# the hybrid model
# --------------------------------------------------------------------------------------------
def _init_linear(layer: nn.Linear, generator: torch.Generator) -> nn.Linear:
    """torch's default Linear init (U[-1/sqrt(fan_in), 1/sqrt(fan_in)]) from ``generator``."""
    bound = 1 / math.sqrt(layer.in_features)
    with torch.no_grad():
        layer.weight.uniform_(-bound, bound, generator=generator)
        layer.bias.uniform_(-bound, bound, generator=generator)
    return layer


class HybridQNN(nn.Module):
    """PCA features (B, d) -> FC_in -> angles (B, n) -> circuit -> <Z> (B, n) -> FC_out -> logits.

    ``gradient`` names the circuit-differentiation method of :data:`repro.quantum.GRADIENTS`.
    """

    def __init__(self, in_dim: int, n_classes: int, ansatz: Ansatz, *, gradient: str = "backprop",
                 dtype: torch.dtype = torch.complex64, generator: torch.Generator):
        super().__init__()
        real = REAL_DTYPE[dtype]
        self.ansatz, self.dtype, self.gradient = ansatz, dtype, gradient
        self.expval = GRADIENTS.get(gradient)
        self.fc_in = _init_linear(nn.Linear(in_dim, ansatz.n_qubits, dtype=real), generator)
        self.theta = nn.Parameter(ansatz.random_theta(generator, real))
        self.fc_out = _init_linear(nn.Linear(ansatz.n_qubits, n_classes, dtype=real), generator)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        angles = self.fc_in(z)  # (B, n)
        e = self.expval(self.ansatz, angles, self.theta, self.dtype)  # (B, n)
        return self.fc_out(e.to(angles.dtype))  # (B, classes)


def _cosine(optimizer: torch.optim.Optimizer, total_steps: int):
    return torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=max(total_steps, 1))


def _loss_acc(logits: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, float]:
    loss = nn.functional.cross_entropy(logits, y)
    return loss, float((logits.argmax(dim=1) == y).float().mean())


# --------------------------------------------------------------------------------------------
# gradient baselines
# --------------------------------------------------------------------------------------------
class GradientTrainer:
    """One update = forward, backward through the circuit by the model's method, two Adam steps."""

    def __init__(self, model: HybridQNN, cfg: RLQGradConfig, total_steps: int):
        self.model = model
        classical = [*model.fc_in.parameters(), *model.fc_out.parameters()]
        self.opt_classical = torch.optim.Adam(classical, lr=cfg.lr_classical, weight_decay=cfg.weight_decay)
        self.opt_theta = torch.optim.Adam([model.theta], lr=cfg.lr_theta)
        self.sched = _cosine(self.opt_classical, total_steps)

    def step(self, z: torch.Tensor, y: torch.Tensor) -> tuple[float, float]:
        loss, acc = _loss_acc(self.model(z), y)
        self.opt_classical.zero_grad(set_to_none=True)
        self.opt_theta.zero_grad(set_to_none=True)
        loss.backward()
        self.opt_classical.step()
        self.opt_theta.step()
        self.sched.step()
        return float(loss.detach()), acc


# --------------------------------------------------------------------------------------------
# RLQ-Grad: the update proposed by a PPO agent (repro.rl.ppo)
# --------------------------------------------------------------------------------------------
def rlqgrad_agent(n_params: int, cfg: RLQGradConfig, *, seed: int) -> PPOAgent:
    """The agent of a circuit with ``n_params`` parameters: s in R^(2P + 2), g in R^P; spectrally
    normalised actor and critic of width ``cfg.hidden``."""
    return PPOAgent(2 * n_params + 2, n_params, cfg.ppo, hidden=cfg.hidden, spectral_norm=True, seed=seed)


def rl_state(theta: torch.Tensor, loss: float, acc: float, prev_update: torch.Tensor) -> torch.Tensor:
    """s = [theta wrapped to (-pi, pi] / pi, mean loss, mean accuracy, previous update]: (2P + 2,)."""
    wrapped = torch.remainder(theta.detach().reshape(-1).float() + math.pi, 2 * math.pi) - math.pi
    return torch.cat([wrapped / math.pi, torch.tensor([loss, acc]), prev_update])


class RLQGradTrainer:
    """One update = one forward pass (loss, accuracy, reward), one FC_out Adam step, one action.

    The circuit parameters only ever change by theta <- theta - eta g with g from the policy.
    """

    def __init__(self, model: HybridQNN, cfg: RLQGradConfig, total_steps: int, *, seed: int):
        self.model, self.cfg = model, cfg
        model.expval = GRADIENTS.get("none")  # no gradient path through the circuit
        model.theta.requires_grad_(False)
        model.fc_in.requires_grad_(False)  # its gradient would need the circuit's derivative
        self.opt_classical = torch.optim.Adam(model.fc_out.parameters(), lr=cfg.lr_classical,
                                              weight_decay=cfg.weight_decay)
        self.sched = _cosine(self.opt_classical, total_steps)
        p = model.ansatz.n_params
        self.agent = rlqgrad_agent(p, cfg, seed=seed)
        self.prev_update = torch.zeros(p)
        self.pending: tuple | None = None
        self.buffer: list[tuple] = []
        self.last_stats: dict[str, float] = {}

    def propose(self, state: torch.Tensor) -> torch.Tensor:
        """The RL update proposal: sample g from the policy and apply theta <- theta - eta g."""
        g, logp, value = self.agent.act(state)
        with torch.no_grad():
            self.model.theta -= self.cfg.update_scale * g.reshape(self.model.theta.shape).to(self.model.theta.dtype)
        self.prev_update = g
        self.pending = (state, g, logp, value)
        return g

    def step(self, z: torch.Tensor, y: torch.Tensor) -> tuple[float, float]:
        loss, acc = _loss_acc(self.model(z), y)
        self.opt_classical.zero_grad(set_to_none=True)
        loss.backward()  # reaches FC_out only
        self.opt_classical.step()
        self.sched.step()
        loss_v = float(loss.detach())
        state = rl_state(self.model.theta, loss_v, acc, self.prev_update)
        if self.pending is not None:  # the reward of the previous action, read at theta_{t+1}
            self.buffer.append((*self.pending, acc + 1.0 / (loss_v + self.cfg.reward_eps)))
            if len(self.buffer) == self.cfg.rollout:
                self._learn(state)
        self.propose(state)
        return loss_v, acc

    def _learn(self, next_state: torch.Tensor) -> None:
        states, actions, logps, values, rewards = (torch.stack([torch.as_tensor(b[i]) for b in self.buffer])
                                                   for i in range(5))
        with torch.no_grad():
            last_value = self.agent.critic(next_state[None])[0, 0]
        self.last_stats = self.agent.learn(states, actions, logps, values, rewards.float(), last_value)
        self.buffer.clear()


# --------------------------------------------------------------------------------------------
# registry and training loop
# --------------------------------------------------------------------------------------------
METHODS = Registry("QNN training method")


def _gradient_method(name: str):
    def factory(*, in_dim, n_classes, cfg: RLQGradConfig, total_steps: int, seed: int):
        model = HybridQNN(in_dim, n_classes, Ansatz(cfg.n_qubits, cfg.n_layers), gradient=name,
                          dtype=cfg.complex_dtype, generator=torch_generator(seed))
        return GradientTrainer(model, cfg, total_steps)
    return factory


for _name in ("backprop", "parameter_shift", "adjoint"):
    METHODS.register(_name)(_gradient_method(_name))


@METHODS.register("rlqgrad")
def _rlqgrad(*, in_dim, n_classes, cfg: RLQGradConfig, total_steps: int, seed: int):
    model = HybridQNN(in_dim, n_classes, Ansatz(cfg.n_qubits, cfg.n_layers), gradient="none",
                      dtype=cfg.complex_dtype, generator=torch_generator(seed))
    return RLQGradTrainer(model, cfg, total_steps, seed=seed + 17)


def build_trainer(method: str, *, in_dim: int, n_classes: int, cfg: RLQGradConfig, total_steps: int, seed: int):
    """The trainer of ``method`` (a :data:`METHODS` key) around a freshly initialised model."""
    return METHODS.create(method, in_dim=in_dim, n_classes=n_classes, cfg=cfg, total_steps=total_steps, seed=seed)


@torch.no_grad()
def accuracy(model: HybridQNN, x: torch.Tensor, y: torch.Tensor, chunk: int = 256) -> float:
    correct = 0
    for i in range(0, len(x), chunk):
        correct += int((model(x[i:i + chunk]).argmax(dim=1) == y[i:i + chunk]).sum())
    return correct / len(x)


def train_qnn(method: str, data: Dataset, cfg: RLQGradConfig, *, seed: int, dataset: str = "") -> dict[str, Any]:
    """Train the hybrid QNN on ``data`` (PCA features) for ``cfg.steps`` updates with ``method``.

    Returns the top-1 validation and training accuracy, the loss curve, and wall times.
    """
    from repro.logs import progress

    if data.x_train.shape[1] != cfg.pca_dim:
        raise ValueError(f"dataset {dataset!r} has {data.x_train.shape[1]} features, the config pca_dim={cfg.pca_dim}")
    data = dataclasses.replace(data, x_train=data.x_train.to(cfg.real_dtype), x_val=data.x_val.to(cfg.real_dtype))
    trainer = build_trainer(method, in_dim=cfg.pca_dim, n_classes=data.n_classes, cfg=cfg, total_steps=cfg.steps, seed=seed)
    gen = torch_generator(seed + 3)
    losses, accs = [], []
    start = time.perf_counter()
    for _ in progress(range(cfg.steps), desc=f"{method} n={cfg.n_qubits}", unit="update"):
        idx = torch.randint(len(data.x_train), (cfg.batch_size,), generator=gen)
        loss, acc = trainer.step(data.x_train[idx], data.y_train[idx])
        losses.append(loss)
        accs.append(acc)
    wall = time.perf_counter() - start
    model = trainer.model
    val_acc = accuracy(model, data.x_val, data.y_val)
    log.info("%s on %s, n=%d: val acc %.4f after %d updates (%.1f s)", method, dataset, cfg.n_qubits, val_acc,
             cfg.steps, wall)
    tail = max(len(losses) // 10, 1)
    return {"method": method, "dataset": dataset, "n_qubits": cfg.n_qubits, "n_layers": cfg.n_layers,
            "steps": cfg.steps, "val_accuracy": val_acc, "train_accuracy": accuracy(model, data.x_train, data.y_train),
            "final_train_loss": float(np.mean(losses[-tail:])), "train_wall_s": wall, "s_per_update": wall / cfg.steps,
            "loss_curve": losses, "batch_accuracy_curve": accs, "n_params_circuit": model.ansatz.n_params}
