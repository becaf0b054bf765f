"""Feature extractors that a defence immunizes: pure functions of one flat parameter vector.

Each extractor maps inputs x (n, d_in) to features z (n, width) as ``features(params, x)`` with
``params`` a flat tensor, so ``torch.func`` (Hessian-vector products, exact Hessians) sees the whole
model as one vector. Each ends in a linear output layer without bias (``output``: its slice of
``params``), so scaling that slice scales the features exactly; the defences use it to keep the
benign features' scale (``rescale_``).

- ``linear``: z = x @ Theta (d_in x width); also accepts Theta as a matrix (the original layout).
- ``mlp``: z = tanh(x W1 + b1) W2, one hidden layer of ``hidden`` units.
- ``transformer``: the 8 x 8 image cut into patch tokens (``patch`` x ``patch`` pixels: 4 tokens of 4 x 4 by
  default, 16 of 2 x 2 with ``patch=2``), a token embedding plus
  learned positions (``dim``), one pre-norm block (single-head self-attention, a GELU MLP of width
  2 dim; parameter-free layer norms), mean pooling, and the output layer. No final layer norm: a
  parameter-free one centres every token over its dim entries, so the pooled features would span
  dim - 1 directions and the probe Hessian would be singular (kappa ~1e16 in the first prototype).

``pretrain`` trains an extractor with a temporary ten-way head (full-batch Adam, cross-entropy) and
returns its parameters: the "released" model an immunizer starts from.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from repro.nn.mixer import patchify

__all__ = ["Extractor", "LinearExtractor", "MLPExtractor", "PatchTransformer", "make_extractor", "pretrain",
           "MODELS"]

MODELS = ("linear", "mlp", "transformer")


class Extractor:
    """Interface: ``n_params``, ``width``, ``features(params, x)``, ``output`` (slice), ``init(generator)``."""

    kind = ""
    d_in: int
    width: int
    n_params: int
    output: slice

    def features(self, params: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def init(self, generator: torch.Generator, dtype=torch.float64) -> torch.Tensor:
        raise NotImplementedError

    def rescale_(self, params: torch.Tensor, factor: torch.Tensor | float) -> None:
        """Scale the features by ``factor`` in place (the output layer; every entry of a linear Theta)."""
        params.view(-1)[self.output].mul_(factor)

    def _check(self, params: torch.Tensor, x: torch.Tensor) -> None:
        if params.numel() != self.n_params or x.ndim != 2 or x.shape[1] != self.d_in:
            raise ValueError(f"{self.kind} extractor: need {self.n_params} parameters and inputs (n, {self.d_in}); "
                             f"got {params.numel()} and {tuple(x.shape)}")


class LinearExtractor(Extractor):
    kind = "linear"

    def __init__(self, d_in: int, width: int):
        self.d_in, self.width = d_in, width
        self.n_params = d_in * width
        self.output = slice(0, self.n_params)

    def features(self, params, x):
        self._check(params, x)
        return x @ params.reshape(self.d_in, self.width)

    def rescale_(self, params, factor):
        params.mul_(factor)  # every entry is the output layer (also for a d_in x width matrix)

    def init(self, generator, dtype=torch.float64):
        return torch.randn(self.n_params, generator=generator, dtype=dtype) / math.sqrt(self.d_in)


class MLPExtractor(Extractor):
    kind = "mlp"

    def __init__(self, d_in: int, width: int, hidden: int):
        if hidden < 1:
            raise ValueError(f"mlp extractor: need hidden >= 1; got {hidden}")
        self.d_in, self.width, self.hidden = d_in, width, hidden
        self._w1 = d_in * hidden
        self.n_params = self._w1 + hidden + hidden * width
        self.output = slice(self._w1 + hidden, self.n_params)

    def features(self, params, x):
        self._check(params, x)
        h = self.hidden
        w1 = params[: self._w1].reshape(self.d_in, h)
        b1 = params[self._w1: self._w1 + h]
        w2 = params[self.output].reshape(h, self.width)
        return torch.tanh(x @ w1 + b1) @ w2

    def init(self, generator, dtype=torch.float64):
        w1 = torch.randn(self._w1, generator=generator, dtype=dtype) / math.sqrt(self.d_in)
        w2 = torch.randn(self.hidden * self.width, generator=generator, dtype=dtype) / math.sqrt(self.hidden)
        return torch.cat([w1, torch.zeros(self.hidden, dtype=dtype), w2])


class PatchTransformer(Extractor):
    kind = "transformer"
    SIDE = 8

    def __init__(self, d_in: int, width: int, dim: int, patch: int = 4):
        if d_in != self.SIDE ** 2 or dim < 1 or patch not in (1, 2, 4, 8):
            raise ValueError(f"transformer extractor: needs 8 x 8 images (d_in = 64), dim >= 1 and patch in 1, 2, 4, 8;"
                             f" got {d_in}, {dim}, {patch}")
        self.d_in, self.width, self.dim, self.patch = d_in, width, dim, patch
        self.n_tokens = (self.SIDE // patch) ** 2
        p = patch ** 2
        m = dim
        shapes = {"embed": (p, m), "pos": (self.n_tokens, m), "wq": (m, m), "wk": (m, m), "wv": (m, m), "wo": (m, m),
                  "f1": (m, 2 * m), "c1": (2 * m,), "f2": (2 * m, m), "out": (m, width)}
        self._slices, start = {}, 0
        for name, shape in shapes.items():
            n = math.prod(shape)
            self._slices[name] = (slice(start, start + n), shape)
            start += n
        self.n_params = start
        self.output = self._slices["out"][0]

    def _get(self, params, name):
        sl, shape = self._slices[name]
        return params[sl].reshape(shape)

    def tokens(self, x: torch.Tensor) -> torch.Tensor:
        """(n, 64) pixels -> (n, tokens, patch^2) patches, row-major over the patch grid."""
        return patchify(x, self.SIDE, self.SIDE, 1, self.patch)

    def features(self, params, x):
        self._check(params, x)
        params = params.reshape(-1)
        m = self.dim
        g = lambda name: self._get(params, name)
        h = self.tokens(x) @ g("embed") + g("pos")
        a = F.layer_norm(h, (m,))
        att = torch.softmax((a @ g("wq")) @ (a @ g("wk")).transpose(1, 2) / math.sqrt(m), dim=-1)
        h = h + (att @ (a @ g("wv"))) @ g("wo")
        h = h + F.gelu(F.layer_norm(h, (m,)) @ g("f1") + g("c1")) @ g("f2")
        return h.mean(1) @ g("out")

    def init(self, generator, dtype=torch.float64):
        parts = []
        for name, (sl, shape) in self._slices.items():
            fan_in = shape[0] if len(shape) == 2 else 1
            scale = 0.0 if name == "c1" else (0.1 if name == "pos" else 1 / math.sqrt(fan_in))
            parts.append(torch.randn(sl.stop - sl.start, generator=generator, dtype=dtype) * scale)
        return torch.cat(parts)


def make_extractor(model: str, d_in: int, width: int, *, hidden: int = 32, dim: int = 16, patch: int = 4) -> Extractor:
    """One of ``MODELS`` with output ``width``."""
    if model == "linear":
        return LinearExtractor(d_in, width)
    if model == "mlp":
        return MLPExtractor(d_in, width, hidden)
    if model == "transformer":
        return PatchTransformer(d_in, width, dim, patch)
    raise ValueError(f"unknown extractor model {model!r}; known: {', '.join(MODELS)}")


def pretrain(ext: Extractor, x: torch.Tensor, y: torch.Tensor, *, steps: int, lr: float, seed: int
             ) -> tuple[torch.Tensor, dict[str, float]]:
    """(parameters, diagnostics) after ``steps`` of full-batch Adam on the cross-entropy of a temporary head.

    Diagnostics: final training loss and accuracy, and the gradient norm of the extractor's
    parameters at the end (how close to a stationary point the release is).
    """
    if steps < 0 or lr <= 0:
        raise ValueError(f"pretrain: need steps >= 0 and lr > 0; got {steps}, {lr}")
    gen = torch.Generator().manual_seed(seed)
    n_classes = int(y.max()) + 1
    params = ext.init(gen, x.dtype).requires_grad_(True)
    head = (torch.randn(ext.width, n_classes, generator=gen, dtype=x.dtype) / math.sqrt(ext.width)).requires_grad_(True)
    opt = torch.optim.Adam([params, head], lr=lr)
    for _ in range(steps + 1):
        logits = ext.features(params, x) @ head
        loss = F.cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        if _ == steps:
            break
        opt.step()
    diag = {"loss": float(loss.detach()), "train_acc": float((logits.argmax(1) == y).double().mean()),
            "grad_norm": float(params.grad.norm())}
    return params.detach(), diag
