"""The alpha-divergence estimators of repro.rl.alpha_divergence against exact gradients.

A softmax policy over V = 4 responses: every K-tuple of samples is enumerated with its probability,
so an estimator's expectation is computed exactly (no sampling error; tolerances are float64 rounding)
and compared with autograd of the exact divergence, or with the closed forms of both KL limits.
"""

import itertools
import math

import pytest
import torch

from repro.rl.alpha_divergence import (alpha_divergence, log_tilted_target, mcpo_advantages, mcpo_loss,
                                       reverse_kl_pg_loss)

F64 = torch.float64
V, BETA = 4, 0.5
THETA = torch.tensor([0.3, -0.2, 1.0, -0.8], dtype=F64)
REF_LOGP = torch.log_softmax(torch.tensor([0.5, 0.1, -0.4, 0.2], dtype=F64), 0)
REWARD = torch.tensor([1.0, 0.0, 0.2, 0.7], dtype=F64)
MU_LOGP = torch.log_softmax(torch.tensor([0.0, 0.4, -0.3, 0.1], dtype=F64), 0)   # an off-policy behaviour policy
LOG_TARGET = log_tilted_target(REF_LOGP, REWARD, BETA)
LOG_Z = torch.logsumexp(LOG_TARGET, 0)
TARGET_LOGP = LOG_TARGET - LOG_Z


def exact_gradient(alpha, theta=THETA):
    theta = theta.clone().requires_grad_(True)
    alpha_divergence(TARGET_LOGP, torch.log_softmax(theta, 0), alpha).backward()
    return theta.grad


def expected_estimate(alpha, k, *, estimator, centred, behaviour_logp=None, moment=1):
    """E over all V^k sample tuples of the estimate g (moment 1) or of |g - E g|^2 summed (moment 2)."""
    behaviour_logp = torch.log_softmax(THETA, 0) if behaviour_logp is None else behaviour_logp
    tuples = torch.tensor(list(itertools.product(range(V), repeat=k)))          # (V^k, k)
    prob = behaviour_logp[tuples].sum(1).exp()                                  # (V^k,)
    grads = []
    for t in tuples:                                                            # per-tuple gradient
        theta = THETA.clone().requires_grad_(True)
        logp = torch.log_softmax(theta, 0)[t][None]                             # (1, k)
        loss = mcpo_loss(logp, behaviour_logp[t][None], LOG_TARGET[t][None], alpha, estimator=estimator,
                         centred=centred, log_z=LOG_Z.reshape(1))
        grads.append(torch.autograd.grad(loss, theta)[0])
    grads = torch.stack(grads)                                                  # (V^k, V)
    mean = (prob[:, None] * grads).sum(0)
    if moment == 1:
        return mean
    return (prob * ((grads - mean) ** 2).sum(1)).sum()


def test_divergence_closed_form_and_limits():
    p, q = torch.tensor([0.5, 0.5], dtype=F64).log(), torch.tensor([0.25, 0.75], dtype=F64).log()
    by_hand = (1 - (math.sqrt(0.5 * 0.25) + math.sqrt(0.5 * 0.75))) / 0.25
    assert alpha_divergence(p, q, 0.5).item() == pytest.approx(by_hand, rel=1e-12)
    reverse = (q.exp() * (q - p)).sum().item()
    forward = (p.exp() * (p - q)).sum().item()
    assert alpha_divergence(p, q, 0.0).item() == pytest.approx(reverse, rel=1e-12)
    assert alpha_divergence(p, q, 1.0).item() == pytest.approx(forward, rel=1e-12)
    assert alpha_divergence(p, q, 1e-6).item() == pytest.approx(reverse, rel=1e-5)
    assert alpha_divergence(p, q, 1 - 1e-6).item() == pytest.approx(forward, rel=1e-5)
    assert alpha_divergence(p, p, 0.3).item() == pytest.approx(0.0, abs=1e-12)


def test_kl_limits_have_their_closed_form_gradients():
    pi, pistar = torch.softmax(THETA, 0), TARGET_LOGP.exp()
    # forward KL(pi* || pi_theta): the maximum-likelihood gradient pi_theta - pi* (softmax logits)
    assert torch.allclose(exact_gradient(1.0), pi - pistar, atol=1e-12)
    # reverse KL(pi_theta || pi*) is -1/beta times the gradient of E[r] - beta KL(pi_theta || pi_ref)
    theta = THETA.clone().requires_grad_(True)
    logp = torch.log_softmax(theta, 0)
    objective = (logp.exp() * REWARD).sum() - BETA * (logp.exp() * (logp - REF_LOGP)).sum()
    (-objective / BETA).backward()
    assert torch.allclose(exact_gradient(0.0), theta.grad, atol=1e-12)


@pytest.mark.parametrize(("alpha", "centred"), [(a, c) for a in (-0.5, 0.0, 0.3, 1.0, 1.7) for c in (True, False)
                                                 if a != 0.0 or c])   # uncentred alpha = 0 is refused (below)
def test_importance_weighted_estimator_is_unbiased_off_policy(alpha, centred):
    got = expected_estimate(alpha, 3, estimator="is", centred=centred, behaviour_logp=MU_LOGP)
    assert torch.allclose(got, exact_gradient(alpha), atol=1e-12), (got, exact_gradient(alpha))


@pytest.mark.parametrize("alpha", [0.0, 0.5, 1.0])
def test_self_normalised_estimator_converges_to_the_rescaled_gradient(alpha):
    """SNIS removes Z; its expectation tends to grad D_alpha / A_alpha with a bias that shrinks as O(1/K)."""
    logq = torch.log_softmax(THETA, 0)
    a_alpha = torch.logsumexp(alpha * TARGET_LOGP + (1 - alpha) * logq, 0).exp()
    target = exact_gradient(alpha) / a_alpha
    bias = [(expected_estimate(alpha, k, estimator="snis", centred=True) - target).norm().item() for k in (2, 4, 6)]
    assert bias[0] > bias[1] > bias[2]
    assert 0.5 < (6 * bias[2]) / (2 * bias[0]) < 2        # K * bias about constant: O(1/K), not a constant bias
    if alpha == 0.0:   # the group-mean baseline includes the sample itself: exactly (K - 1) / K of the gradient
        assert torch.allclose(expected_estimate(0.0, 4, estimator="snis", centred=True), 0.75 * target, atol=1e-12)


def test_self_normalised_estimator_is_consistent_by_sampling():
    """K = 512 samples per group, 400 groups: the mean estimate is within 4 s.e. of grad D_alpha / A_alpha."""
    alpha, k, groups = 0.5, 512, 400
    gen = torch.Generator().manual_seed(0)
    logq = torch.log_softmax(THETA, 0)
    ys = torch.multinomial(logq.exp(), groups * k, replacement=True, generator=gen).reshape(groups, k)
    coef = mcpo_advantages(logq[ys], logq[ys], LOG_TARGET[ys], alpha)                     # (G, K)
    onehot = torch.nn.functional.one_hot(ys, V).double()                                   # grad log pi = e_y - pi
    est = -(coef[..., None] * (onehot - logq.exp())).sum(1)                                # (G, V)
    a_alpha = torch.logsumexp(alpha * TARGET_LOGP + (1 - alpha) * logq, 0).exp()
    se = est.std(0) / math.sqrt(groups)
    assert ((est.mean(0) - exact_gradient(alpha) / a_alpha).abs() < 4 * se + 1e-3 / k).all()


@pytest.mark.parametrize("alpha", [0.2, 1.0])
def test_centring_keeps_the_expectation_and_cuts_the_variance(alpha):
    centred = expected_estimate(alpha, 3, estimator="snis", centred=True)
    plain = expected_estimate(alpha, 3, estimator="snis", centred=False)
    assert torch.allclose(centred, plain, atol=1e-12)      # on-policy the baseline term has mean zero
    var_c = expected_estimate(alpha, 3, estimator="snis", centred=True, moment=2)
    var_u = expected_estimate(alpha, 3, estimator="snis", centred=False, moment=2)
    assert var_c < var_u


def test_alpha_zero_is_the_reverse_kl_policy_gradient_sample_by_sample():
    """On-policy, MCPO's centred alpha = 0 gradient is (K-1)/(K beta) times RLOO's on the same samples."""
    gen = torch.Generator().manual_seed(1)
    k, groups = 6, 5
    ys = torch.multinomial(torch.softmax(THETA, 0), groups * k, replacement=True, generator=gen).reshape(groups, k)
    grads = {}
    for name in ("mcpo", "rloo", "mcpo_small_alpha"):
        theta = THETA.clone().requires_grad_(True)
        logp = torch.log_softmax(theta, 0)[ys]
        if name == "rloo":
            loss = reverse_kl_pg_loss(logp, REF_LOGP[ys], REWARD[ys], BETA)
        else:
            alpha = 0.0 if name == "mcpo" else 1e-6
            loss = mcpo_loss(logp, logp.detach(), LOG_TARGET[ys], alpha)
        grads[name] = torch.autograd.grad(loss, theta)[0]
    assert torch.allclose(grads["mcpo"], (k - 1) / (k * BETA) * grads["rloo"], atol=1e-12)
    assert torch.allclose(grads["mcpo_small_alpha"], grads["mcpo"], rtol=1e-4, atol=1e-8)


def test_bad_input_is_refused_with_its_name():
    x = torch.zeros(2, 3)
    with pytest.raises(ValueError, match="estimator"):
        mcpo_advantages(x, x, x, 0.5, estimator="vimco")
    with pytest.raises(ValueError, match="centred"):
        mcpo_advantages(x, x, x, 0.0, centred=False)
    with pytest.raises(ValueError, match="log_z"):
        mcpo_advantages(x, x, x, 0.5, estimator="is")
    with pytest.raises(ValueError, match="shape"):
        mcpo_advantages(x, torch.zeros(2, 4), x, 0.5)
    with pytest.raises(ValueError, match="beta"):
        log_tilted_target(x, x, 0.0)
    with pytest.raises(ValueError, match="two samples"):
        reverse_kl_pg_loss(torch.zeros(2, 1), torch.zeros(2, 1), torch.zeros(2, 1), 0.1)
