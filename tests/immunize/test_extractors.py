"""The MLP and patch-transformer extractors: curvature machinery against exact Hessians on them, the output-layer
rescaling, the patch layout, pretraining, and the defences acting on a nonlinear extractor as planted."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from repro.methods.immunization.curvature import exact_hessian, extremal_eigenvalues, hvp
from repro.methods.immunization.extractors import MLPExtractor, PatchTransformer, make_extractor, pretrain
from repro.methods.immunization.regularizers import plateau, r_ill
from repro.methods.immunization.train import adversary, fit_head, immunize


def _full_loss(ext, n=40, n_classes=3, seed=0):
    """Harmful fine-tuning loss of probe + extractor as one flat vector (what a full adversary descends)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, ext.d_in, generator=g, dtype=torch.float64)
    y = torch.randint(0, n_classes, (n,), generator=g)
    k = ext.width * n_classes

    def loss(p):
        return F.cross_entropy(ext.features(p[k:], x) @ p[:k].reshape(ext.width, n_classes), y)

    params = torch.cat([0.3 * torch.randn(k, generator=g, dtype=torch.float64), ext.init(g)])
    return loss, params


@pytest.mark.parametrize("ext", [MLPExtractor(6, 3, 5), PatchTransformer(64, 2, 3, patch=4)], ids=["mlp", "transformer"])
def test_hvp_and_lanczos_match_exact_hessian_of_the_full_model(ext):
    loss, p = _full_loss(ext)
    H = exact_hessian(loss, p)
    assert torch.allclose(H, H.T, atol=1e-10)
    v = torch.randn(p.shape, generator=torch.Generator().manual_seed(1), dtype=p.dtype)
    assert torch.allclose(hvp(loss, p, v), H @ v, atol=1e-10)
    ev = np.linalg.eigvalsh(H.numpy())
    lo, hi = extremal_eigenvalues(loss, p, n_iter=p.numel())  # Lanczos to the full dimension is exact
    assert hi == pytest.approx(ev[-1], rel=1e-6) and lo == pytest.approx(ev[0], rel=1e-6, abs=1e-8)
    assert ev[0] < 0 < ev[-1]  # away from a minimum the full model's Hessian is indefinite: both ends matter
    lo20, hi20 = extremal_eigenvalues(loss, p, n_iter=20)  # a few steps already bracket the spectrum's ends
    assert ev[0] - 1e-9 <= lo20 and hi20 <= ev[-1] + 1e-9 and hi20 > 0.9 * ev[-1]


def test_rescaling_the_output_layer_scales_the_features_exactly():
    x = torch.randn(7, 64, dtype=torch.float64)
    for name in ("linear", "mlp", "transformer"):
        ext = make_extractor(name, 64, 5, hidden=4, dim=6)
        p = ext.init(torch.Generator().manual_seed(0))
        z = ext.features(p, x)
        q = p.clone()
        ext.rescale_(q, 2.5)
        assert torch.allclose(ext.features(q, x), 2.5 * z, atol=1e-12)
        assert (q != p).sum() == ext.output.stop - ext.output.start  # only the output layer moved


def test_patch_tokens_are_the_image_blocks():
    img = torch.arange(64, dtype=torch.float64).reshape(1, 64)
    tok = PatchTransformer(64, 2, 4, patch=2).tokens(img)
    assert tok.shape == (1, 16, 4)
    assert tok[0, 0].tolist() == [0, 1, 8, 9] and tok[0, 1].tolist() == [2, 3, 10, 11] and tok[0, 4].tolist() == [16, 17, 24, 25]
    assert PatchTransformer(64, 2, 4, patch=4).tokens(img)[0, 3].tolist()[:2] == [36, 37]


def test_pretraining_learns_a_planted_task_and_bad_input():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(200, 64, generator=g, dtype=torch.float64)
    y = (x[:, 0] + x[:, 9] > 0).long()
    for ext in (MLPExtractor(64, 4, 8), PatchTransformer(64, 4, 8)):
        params, diag = pretrain(ext, x, y, steps=150, lr=0.02, seed=0)
        assert diag["train_acc"] > 0.95 and params.shape == (ext.n_params,)
    with pytest.raises(ValueError, match="unknown extractor model 'cnn'"):
        make_extractor("cnn", 64, 4)
    with pytest.raises(ValueError, match="8 x 8 images"):
        PatchTransformer(63, 4, 8)
    with pytest.raises(ValueError, match="need 276 parameters"):
        MLPExtractor(64, 4, 4).features(torch.zeros(3), x)


def test_defences_act_on_an_mlp_extractor_as_planted():
    """Harmful and benign tasks in separate input directions: on an MLP each defence must lower its own training
    signal (condnum: R_ill of the harmful features; ours: the plateau term too), keep the benign features' scale,
    and the full adversary must still be able to train the MLP. (Unlike the linear case, R_ill here falls mostly
    because the harmful features grow, not because their kappa does: R_ill is not scale-free; see docs/papers/immunize.md.)"""
    g = torch.Generator().manual_seed(0)
    xh = torch.randn(200, 8, generator=g, dtype=torch.float64)
    xh[:, :4] *= 3.0
    xb = torch.randn(200, 8, generator=g, dtype=torch.float64)
    xb[:, 4:] *= 3.0
    yh = (xh[:, 0] > 0).long()
    ext = MLPExtractor(8, 4, 6)
    theta0 = ext.init(torch.Generator().manual_seed(1))
    w0 = torch.zeros(4, 2, dtype=torch.float64)

    def plat(th):
        return float(plateau(ext.features(th, xh), yh, w0, radius=0.1, n_samples=8,
                             generator=torch.Generator().manual_seed(5)))

    cond, _ = immunize(xh, yh, xb, theta0, method="condnum", steps=300, lr=0.01, w_task=0.0, extractor=ext)
    assert float(r_ill(ext.features(cond, xh))) < 0.7 * float(r_ill(ext.features(theta0, xh)))
    assert float(ext.features(cond, xb).norm()) == pytest.approx(float(ext.features(theta0, xb).norm()), rel=1e-9)
    ours, _ = immunize(xh, yh, xb, theta0, method="ours", steps=300, lr=0.01, w_task=0.0, extractor=ext)
    assert plat(ours) < 0.5 * plat(theta0) and plat(ours) < plat(cond)
    none, _ = immunize(xh, yh, xb, theta0, method="none", steps=10, lr=0.01, extractor=ext)
    assert torch.equal(none, theta0)
    accs = adversary(xh, yh, xh, yh, optimizer="adam", lr=0.05, checkpoints=[0, 200], theta=theta0, extractor=ext)
    assert accs[1] > 0.95


def test_task_loss_keeps_the_benign_task_on_an_mlp():
    """The reference's task term (cross-entropy of a jointly trained benign head) keeps the benign task learnable on
    a non-linear extractor: the benign head's loss on the immunized features is no worse than the release's, and below
    what the harmful and conditioning terms alone leave; the head starts from the release's benign head."""
    g = torch.Generator().manual_seed(0)
    xh = torch.randn(300, 8, generator=g, dtype=torch.float64)
    xb = torch.randn(300, 8, generator=g, dtype=torch.float64)
    yh = (xh[:, 0] + xh[:, 4] > 0).long()  # the tasks share input directions: the harmful terms move benign features
    yb = (xb[:, 1] - xb[:, 4] > 0).long() + 2 * (xb[:, 5] > 0).long()
    ext = MLPExtractor(8, 4, 6)
    theta0 = ext.init(torch.Generator().manual_seed(1))

    def benign_loss(th):
        z = ext.features(th, xb).detach()
        return float(F.cross_entropy(z @ fit_head(z, yb, 4, 300, 0.05), yb))

    kept, _ = immunize(xh, yh, xb, theta0, method="ours", steps=150, lr=0.01, n_samples=2, extractor=ext, y_benign=yb)
    free, _ = immunize(xh, yh, xb, theta0, method="ours", steps=150, lr=0.01, n_samples=2, extractor=ext, w_task=0.0)
    assert benign_loss(kept) < benign_loss(free)
    assert benign_loss(kept) < benign_loss(theta0) + 0.02
    with pytest.raises(ValueError, match="y_benign"):
        immunize(xh, yh, xb, theta0, method="ours", steps=1, lr=0.01, extractor=ext)
