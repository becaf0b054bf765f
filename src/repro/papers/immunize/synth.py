"""The tasks of the immunize rebuild on scikit-learn's 8x8 digits (offline), with a "pretrained" linear extractor.

- harmful task: digits 5-9 (five classes); benign task: digits 0-4 (five classes);
- downstream benign task (new, never seen by the defences): the parity of a benign digit;
- fine-tuning as a service and relearning use one ten-way head (digit 0-9), harmful classes 5-9.

Inputs are the 64 pixels standardised on the training split (zero-variance pixels stay 0). The
released extractor theta0 (64 x k) is the top-k principal directions of the training images of
both tasks, an unsupervised "pretrained encoder" that carries the harmful task as well as the
benign one. For a probe with the squared loss the Hessian is Z^T Z / n with Z = X theta, so the
harmful and benign condition numbers are known in closed form (the planted ground truth that the
curvature estimators are checked against).

``released`` gives the extractor of each model choice: ``linear`` is theta0 itself; ``mlp`` and
``transformer`` are pretrained on the ten-way digit task of the training split (all classes, so
the release carries the harmful task too; ``repro.methods.immunization.extractors.pretrain``) and
their output layer is then scaled so that the mean squared feature norm over the training images
equals the linear release's: the adversary's learning-rate grid then means the same step size
relative to the features for every model (a choice of this rebuild).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from repro.methods.immunization.extractors import Extractor, make_extractor, pretrain

__all__ = ["Tasks", "make_tasks", "released", "HARMFUL_CLASSES", "BENIGN_CLASSES"]

BENIGN_CLASSES = (0, 1, 2, 3, 4)
HARMFUL_CLASSES = (5, 6, 7, 8, 9)


@dataclass
class Tasks:
    x_train: torch.Tensor   # (N, 64) standardised pixels
    y_train: torch.Tensor   # digit 0-9
    x_test: torch.Tensor
    y_test: torch.Tensor
    theta0: torch.Tensor    # (64, k) released extractor

    def split(self, part: str, which: str) -> tuple[torch.Tensor, torch.Tensor]:
        """(x, digit) of the ``harmful`` or ``benign`` images of the ``train`` or ``test`` split."""
        x, y = (self.x_train, self.y_train) if part == "train" else (self.x_test, self.y_test)
        classes = HARMFUL_CLASSES if which == "harmful" else BENIGN_CLASSES
        keep = torch.isin(y, torch.as_tensor(classes))
        return x[keep], y[keep]


def make_tasks(seed: int, *, k: int = 16, test_frac: float = 0.3) -> Tasks:
    """Split digits by ``seed`` and fit the released extractor (top-``k`` principal directions)."""
    if not 1 <= k <= 64 or not 0 < test_frac < 1:
        raise ValueError(f"immunize tasks: need 1 <= k <= 64 and 0 < test_frac < 1; got k={k}, test_frac={test_frac}")
    from sklearn.datasets import load_digits

    data = load_digits()
    x, y = data.data.astype(np.float64) / 16.0, data.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(y))
    n_test = int(round(test_frac * len(y)))
    test, train = order[:n_test], order[n_test:]
    mu, sd = x[train].mean(0), x[train].std(0)
    sd[sd == 0] = 1.0
    x = (x - mu) / sd
    _, _, vt = np.linalg.svd(x[train], full_matrices=False)
    t = torch.as_tensor
    return Tasks(t(x[train]), t(y[train]), t(x[test]), t(y[test]), t(vt[:k].T.copy()))


def released(model: str, tasks: Tasks, *, seed: int, hidden: int = 32, dim: int = 16, patch: int = 4,
             steps: int = 300, lr: float = 0.01) -> tuple[Extractor, torch.Tensor, dict[str, Any]]:
    """(extractor, its released flat parameters, pretraining diagnostics) of ``model`` for ``tasks``."""
    d, k = tasks.theta0.shape
    ext = make_extractor(model, d, k, hidden=hidden, dim=dim, patch=patch)
    if model == "linear":
        return ext, tasks.theta0.reshape(-1).clone(), {"n_params": ext.n_params}
    params, diag = pretrain(ext, tasks.x_train, tasks.y_train, steps=steps, lr=lr, seed=seed)
    with torch.no_grad():
        target = (tasks.x_train @ tasks.theta0).pow(2).sum(1).mean()
        ext.rescale_(params, (target / ext.features(params, tasks.x_train).pow(2).sum(1).mean()).sqrt())
    return ext, params, diag | {"n_params": ext.n_params}
