"""The geometry of a model's training loss at its current parameters, on a fixed batch with frozen noise.

:class:`LossGeometry` turns ``model.loss(x, noise)`` into a function of the flat parameter vector and
gives its Hessian-vector products, top Hessian eigenvalues (Lanczos), the Hutchinson trace of the
Hessian restricted to the decoder's parameters, and the top eigenvalues of the Gauss-Newton matrix
J^T H_out J of the model's outputs. :func:`effective_rank` is exp of the entropy of a normalised
spectrum. The model supplies ``decoder_prefix``, ``gn_outputs`` and ``output_hessian``
(:mod:`repro.nn.generative`'s models do).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from repro.stats.lanczos import lanczos_eigenvalues

__all__ = ["LossGeometry", "effective_rank"]


def effective_rank(values) -> float:
    """exp of the Shannon entropy of the normalised non-negative spectrum (Roy and Vetterli 2007)."""
    v = np.clip(np.asarray(values, float), 0, None)
    if v.sum() <= 0:
        return 0.0
    p = v[v > 0] / v.sum()
    return float(np.exp(-(p * np.log(p)).sum()))


class LossGeometry:
    """The loss on a fixed batch with frozen noise, as a function of the flat parameter vector."""

    def __init__(self, model: nn.Module, x: torch.Tensor, noise):
        self.model, self.x, self.noise = model, x, noise
        self.names = [n for n, _ in model.named_parameters()]  # VaDE's prior included (fitted by its M-step)
        self.params = dict(model.named_parameters())
        self.shapes = [(n, self.params[n].shape, self.params[n].numel()) for n in self.names]
        self.w0 = torch.cat([self.params[n].detach().reshape(-1) for n in self.names])
        self.dim = self.w0.numel()
        self.decoder_mask = torch.cat([torch.full((k,), float(n.startswith(model.decoder_prefix))) for n, _, k in self.shapes])

    def _call(self, w, method, *args):
        params, i = {}, 0
        for n, shape, k in self.shapes:
            params[n] = w[i:i + k].view(shape)
            i += k
        if method is None:
            return torch.func.functional_call(self.model, params, args)
        return torch.func.functional_call(_Method(self.model, method), {f"model.{n}": v for n, v in params.items()}, args)

    def loss(self, w):
        return self._call(w, None, self.x, self.noise)

    def hvp(self, v: torch.Tensor, w=None) -> torch.Tensor:
        w = self.w0 if w is None else w
        return torch.func.jvp(torch.func.grad(self.loss), (w,), (v,))[1]

    def top_hessian(self, k: int, n_iter: int, seed: int) -> np.ndarray:
        return lanczos_eigenvalues(lambda v: self.hvp(torch.as_tensor(v, dtype=torch.float32)).double().numpy(),
                                   self.dim, k=k, n_iter=n_iter, seed=seed)

    def decoder_trace(self, probes: int, seed: int) -> float:
        """Hutchinson: E[v^T H_dd v] over Rademacher v on the decoder's coordinates, per decoder parameter."""
        g = torch.Generator().manual_seed(seed % (2**63))
        m = self.decoder_mask
        total = 0.0
        for _ in range(probes):
            v = (torch.randint(0, 2, (self.dim,), generator=g).float() * 2 - 1) * m
            total += float(v @ self.hvp(v))
        return total / probes / float(m.sum())

    def gauss_newton_top(self, k: int, seed: int) -> np.ndarray:
        """Top eigenvalues of J^T H_out J (outputs: decoder logits or predicted noise) by Lanczos."""
        with torch.no_grad():
            h = self.model.output_hessian(self.x, self.noise)

        def out(w):
            return self._call(w, "gn_outputs", self.x, self.noise)

        _, jvp_fn = torch.func.linearize(out, self.w0)
        _, vjp_fn = torch.func.vjp(out, self.w0)

        def gnvp(v):
            u = jvp_fn(torch.as_tensor(v, dtype=torch.float32))
            return vjp_fn(h * u)[0].double().numpy()

        return lanczos_eigenvalues(gnvp, self.dim, k=k, n_iter=k + 10, seed=seed)

    def loss_grad_numpy(self):
        def f(w_np):
            w = torch.as_tensor(w_np, dtype=torch.float32).requires_grad_(True)
            value = self.loss(w)
            (g,) = torch.autograd.grad(value, w)
            return float(value.detach()), g.double().numpy()
        return f


class _Method(nn.Module):
    """Calls ``model.<method>`` through functional_call (parameters swapped in by name)."""

    def __init__(self, model, method):
        super().__init__()
        self.model, self.method = model, method

    def forward(self, *args):
        return getattr(self.model, self.method)(*args)
