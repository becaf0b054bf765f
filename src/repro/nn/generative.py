"""Small generative models on flat images, and the classifier that labels their samples.

A VAE with a Bernoulli decoder, VaDE (Jiang et al. 2017: the VAE with a learnable Gaussian-mixture
prior, refitted by its closed-form M-step) and a compact DDPM (Ho et al. 2020: an MLP with a
sinusoidal time embedding predicting x_0). Each exposes ``loss(x, noise)`` with its noise drawn by
``noise(x, generator)`` (so a loss can be frozen as a function of the weights), ``sample``, and the
hooks that :class:`repro.stats.loss_geometry.LossGeometry` reads (``decoder_prefix``, ``gn_outputs``,
``output_hessian``). Used by the model-collapse experiment (``repro.papers.collapse.neural``), whose
docstring gives the choices made for it.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

__all__ = ["VAE", "VaDE", "DDPM", "forward_marginal", "SampleClassifier", "train_classifier"]


def _mlp(sizes: list[int]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(nn.SiLU())
    return nn.Sequential(*layers)


class VAE(nn.Module):
    """MLP VAE with a Bernoulli decoder; ``loss(x, noise)`` is the negative ELBO per image (mean over the batch)."""

    decoder_prefix = "dec."

    def __init__(self, dim: int, hidden: int, latent: int):
        super().__init__()
        self.latent = latent
        self.enc = _mlp([dim, hidden, hidden])
        self.head = nn.Linear(hidden, 2 * latent)
        self.dec = _mlp([latent, hidden, hidden, dim])

    def forward(self, x, noise):
        return self.loss(x, noise)

    def encode(self, x):
        mu, logvar = self.head(torch.nn.functional.silu(self.enc(x))).chunk(2, dim=1)
        return mu, logvar.clamp(-8, 8)

    def features(self, x):
        return torch.nn.functional.silu(self.enc(x))

    def noise(self, x, gen):
        return torch.randn(len(x), self.latent, generator=gen)

    def decoder_logits(self, x, eps):
        mu, logvar = self.encode(x)
        return self.dec(mu + eps * (0.5 * logvar).exp())

    def recon(self, x, z):
        return torch.nn.functional.binary_cross_entropy_with_logits(self.dec(z), x, reduction="none").sum(1)

    def loss(self, x, eps):
        mu, logvar = self.encode(x)
        z = mu + eps * (0.5 * logvar).exp()
        kl = 0.5 * (mu.pow(2) + logvar.exp() - 1 - logvar).sum(1)
        return (self.recon(x, z) + kl).mean()

    def output_hessian(self, x, eps):
        """Diagonal of the loss's Hessian in the decoder logits (the Gauss-Newton output weight)."""
        p = torch.sigmoid(self.decoder_logits(x, eps))
        return p * (1 - p) / len(x)

    def gn_outputs(self, x, eps):
        return self.decoder_logits(x, eps)

    @torch.no_grad()
    def sample(self, n, gen):
        return torch.sigmoid(self.dec(torch.randn(n, self.latent, generator=gen)))


class VaDE(VAE):
    """VAE with a Gaussian-mixture prior p(z) = Σ_k π_k N(μ_k, diag σ²_k) (Jiang et al. 2017, eq. 12)."""

    def __init__(self, dim: int, hidden: int, latent: int, clusters: int):
        super().__init__(dim, hidden, latent)
        self.pi_logits = nn.Parameter(torch.zeros(clusters))
        self.mu_c = nn.Parameter(torch.zeros(clusters, latent))
        self.logvar_c = nn.Parameter(torch.zeros(clusters, latent))
        self.prior_on = False  # False: a plain VAE (the pre-training of VaDE's code)

    def weights(self):
        return torch.softmax(self.pi_logits, 0)

    def responsibilities(self, z, mu_c=None):
        mu_c = self.mu_c if mu_c is None else mu_c
        logp = torch.log_softmax(self.pi_logits, 0) - 0.5 * (
            self.logvar_c + (z[:, None, :] - mu_c).pow(2) / self.logvar_c.exp() + math.log(2 * math.pi)).sum(2)
        return torch.softmax(logp, 1)

    def loss(self, x, eps, mu_c=None):
        if not self.prior_on:
            return super().loss(x, eps)
        mu_c = self.mu_c if mu_c is None else mu_c
        mu, logvar = self.encode(x)
        z = mu + eps * (0.5 * logvar).exp()
        g = self.responsibilities(z, mu_c)
        var_c = self.logvar_c.exp()
        cross = 0.5 * (self.logvar_c + logvar.exp()[:, None, :] / var_c
                       + (mu[:, None, :] - mu_c).pow(2) / var_c).sum(2)          # E_q[-log p(z|c)] - const
        logpi = torch.log_softmax(self.pi_logits, 0)
        kl = (g * (cross - logpi + torch.log(g + 1e-10))).sum(1) - 0.5 * (1 + logvar).sum(1)
        return (self.recon(x, z) + kl).mean()

    @torch.no_grad()
    def sample(self, n, gen):
        if not self.prior_on:
            return super().sample(n, gen)
        c = torch.multinomial(self.weights(), n, replacement=True, generator=gen)
        z = self.mu_c[c] + torch.randn(n, self.latent, generator=gen) * (0.5 * self.logvar_c[c]).exp()
        return torch.sigmoid(self.dec(z))

    @torch.no_grad()
    def init_prior(self, x, seed):
        """A diagonal GMM fitted to the latent means (VaDE's initialisation); switches the mixture prior on."""
        from sklearn.mixture import GaussianMixture

        k = len(self.pi_logits)
        gmm = GaussianMixture(k, covariance_type="diag", random_state=seed % (2**32), n_init=3).fit(self.encode(x)[0].numpy())
        self.pi_logits.copy_(torch.as_tensor(np.log(gmm.weights_), dtype=torch.float32))
        self.mu_c.copy_(torch.as_tensor(gmm.means_, dtype=torch.float32))
        self.logvar_c.copy_(torch.as_tensor(np.log(gmm.covariances_), dtype=torch.float32))
        self.prior_on = True
        for p in (self.pi_logits, self.mu_c, self.logvar_c):  # from here on fitted by the M-step, not by Adam
            p.requires_grad_(False)

    @torch.no_grad()
    def m_step(self, x):
        """The prior's closed-form maximiser of the ELBO given q(z|x) and q(c|x) at the encoder means (EM)."""
        mu, logvar = self.encode(x)
        g = self.responsibilities(mu)
        mass = g.sum(0) + 1e-10
        mu_c = (g.T @ mu) / mass[:, None]
        var_c = (g[:, :, None] * (logvar.exp()[:, None, :] + (mu[:, None, :] - mu_c).pow(2))).sum(0) / mass[:, None]
        self.pi_logits.copy_(torch.log(mass / len(x)))
        self.mu_c.copy_(mu_c)
        self.logvar_c.copy_(torch.log(var_c + 1e-6))

    def cluster_curvature(self, x, eps):
        """Per cluster: trace of the exact Hessian of the loss in its mean μ_k, per latent dimension."""
        names = dict(self.named_parameters())

        def f(mu_c):
            return torch.func.functional_call(self, {**names, "mu_c": mu_c}, (x, eps))

        h = torch.func.hessian(f)(self.mu_c.detach())                       # (K, Z, K, Z)
        k, z = self.mu_c.shape
        return np.array([float(torch.diagonal(h[c, :, c, :]).sum().detach()) / z for c in range(k)])


def _time_embedding(t, dim=32):
    half = dim // 2
    freqs = torch.exp(-math.log(1000.0) * torch.arange(half) / half)
    a = t[:, None].float() * freqs[None]
    return torch.cat([a.sin(), a.cos()], 1)


class DDPM(nn.Module):
    """Compact DDPM (Ho et al. 2020) on images in [-1, 1]: an MLP predicting x_0 from (x_t, t), linear β,
    ancestral sampling through the posterior q(x_{t-1} | x_t, x̂_0).

    x_0-prediction rather than Ho et al.'s ε-prediction (their §3.2 names both parameterisations of
    the reverse mean): at the CPU budget's 1,500 steps an ε-MLP's samples kept pixel noise (per-pixel
    sd 0.49 against the data's 0.17), the x_0-MLP's did not (0.13).
    """

    decoder_prefix = "out."

    def __init__(self, dim: int, hidden: int, steps: int):
        super().__init__()
        self.steps = steps
        # the 1000-step schedule's range rescaled to T steps (T = 100: 1e-3 .. 0.2), capped at 0.5 for short chains
        betas = (torch.linspace(1e-4, 0.02, steps) * (1000 / steps)).clamp(max=0.5)
        self.register_buffer("betas", betas)
        self.register_buffer("alpha_bar", torch.cumprod(1 - betas, 0))
        self.body = _mlp([dim + 32, hidden, hidden])
        self.out = _mlp([hidden, hidden, dim])

    def forward(self, x, noise):
        return self.loss(x, noise)

    def features(self, x, t=None):
        """Last hidden layer of the denoiser on images x in [0, 1] at step t (default 0: clean images are
        its input only at the first steps; at t = T/2 its inputs are mostly noise, ᾱ ~ 0.08 at T = 100)."""
        t = torch.zeros(len(x), dtype=torch.long) if t is None else t
        return torch.nn.functional.silu(self.body(torch.cat([x * 2 - 1, _time_embedding(t)], 1)))

    def x0_hat(self, xt, t):
        return self.out(torch.nn.functional.silu(self.body(torch.cat([xt, _time_embedding(t)], 1))))

    def noise(self, x, gen):
        return (torch.randint(0, self.steps, (len(x),), generator=gen), torch.randn(x.shape, generator=gen))

    def noised(self, x, noise):
        """x_t = √ᾱ_t x_0 + √(1 - ᾱ_t) ε for images x in [0, 1] (x_0 = 2x - 1): the forward marginal q(x_t | x_0)."""
        t, e = noise
        ab = self.alpha_bar[t][:, None]
        return ab.sqrt() * (x * 2 - 1) + (1 - ab).sqrt() * e, t

    def gn_outputs(self, x, noise):
        return self.x0_hat(*self.noised(x, noise))

    def output_hessian(self, x, noise):
        return torch.full_like(x, 2.0 / x.numel())

    def loss(self, x, noise):
        return (self.x0_hat(*self.noised(x, noise)) - (x * 2 - 1)).pow(2).mean()

    @torch.no_grad()
    def sample(self, n, gen):
        x = torch.randn(n, self.out[-1].out_features, generator=gen)
        for t in reversed(range(self.steps)):
            b, ab = self.betas[t], self.alpha_bar[t]
            ab_prev = self.alpha_bar[t - 1] if t > 0 else torch.tensor(1.0)
            x0 = self.x0_hat(x, torch.full((n,), t)).clamp(-1, 1)
            x = ab_prev.sqrt() * b / (1 - ab) * x0 + (1 - b).sqrt() * (1 - ab_prev) / (1 - ab) * x
            if t > 0:
                x = x + ((1 - ab_prev) / (1 - ab) * b).sqrt() * torch.randn(x.shape, generator=gen)
        return (x.clamp(-1, 1) + 1) / 2


def forward_marginal(alpha_bar: torch.Tensor, t: int) -> tuple[float, float]:
    """q(x_t | x_0) = N(√ᾱ_t x_0, (1 - ᾱ_t) I): the (scale of x_0, variance) at step t."""
    ab = float(alpha_bar[t])
    return math.sqrt(ab), 1 - ab


class SampleClassifier(nn.Module):
    def __init__(self, dim, k):
        super().__init__()
        self.body = _mlp([dim, 64])
        self.head = nn.Linear(64, k)

    def forward(self, x):
        return self.head(torch.relu(self.body(x)))


def train_classifier(x: torch.Tensor, y: torch.Tensor, k: int, steps: int, seed: int) -> SampleClassifier:
    """The fixed labeller of generated images: an MLP fitted to the whole real pool (full batch Adam)."""
    torch.manual_seed(seed % (2**31))
    clf = SampleClassifier(x.shape[1], k)
    opt = torch.optim.Adam(clf.parameters(), lr=3e-3)
    for _ in range(steps):
        loss = torch.nn.functional.cross_entropy(clf(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return clf.eval()
