"""HIM's element-wise merge against closed forms on a quadratic with known diagonal Hessians."""

import numpy as np
import pytest
import torch

from repro.methods.merging import (
    OptimaMemory,
    elementwise_modulation,
    joint_minimiser,
    joint_quadratic,
    pm_alpha,
    scalar_optimum,
)


def _problem(seed, n_tasks=4, dim=50, isotropic=False):
    rng = np.random.default_rng(seed)
    optima = rng.normal(size=(n_tasks, dim))
    if isotropic:
        curv = np.outer(rng.uniform(0.5, 3.0, n_tasks), np.ones(dim))
    else:
        curv = rng.gamma(0.5, 1.0, size=(n_tasks, dim))
    return rng.normal(size=dim), optima, curv


@pytest.mark.parametrize("seed", range(5))
def test_elementwise_merge_attains_the_exact_joint_minimum(seed):
    theta_prev, optima, curv = _problem(seed)
    u = joint_minimiser(theta_prev, optima, curv).numpy()
    exact = (curv * optima).sum(0) / curv.sum(0)  # d/dtheta of sum_i h_i (theta - theta_i*)^2 = 0
    np.testing.assert_allclose(theta_prev + u, exact, rtol=1e-10)
    # no other point does better: the Hessian of J is diagonal positive, so J(min + e) > J(min)
    rng = np.random.default_rng(seed + 100)
    j_min = joint_quadratic(theta_prev + u, optima, curv)
    for _ in range(20):
        assert joint_quadratic(theta_prev + u + 1e-3 * rng.normal(size=u.shape), optima, curv) > j_min


@pytest.mark.parametrize("seed", range(5))
def test_scalar_optimum_minimises_j_along_the_update_and_loses_to_elementwise(seed):
    theta_prev, optima, curv = _problem(seed)
    delta = optima[-1] - theta_prev
    alpha = scalar_optimum(theta_prev, optima, curv)
    grid = np.linspace(alpha - 1, alpha + 1, 2001)
    j = [joint_quadratic(theta_prev + a * delta, optima, curv) for a in grid]
    assert abs(grid[int(np.argmin(j))] - alpha) <= 1e-3  # grid step
    u = joint_minimiser(theta_prev, optima, curv).numpy()
    assert joint_quadratic(theta_prev + u, optima, curv) < joint_quadratic(theta_prev + alpha * delta, optima, curv)


@pytest.mark.parametrize("seed", range(3))
def test_equal_curvature_profiles_reduce_to_the_scalar_optimum(seed):
    theta_prev, optima, curv = _problem(seed, isotropic=True)
    # continual-learning form: previous optima at the previous weights, current optimum at theta_prev + Delta
    optima[:-1] = theta_prev
    delta = optima[-1] - theta_prev
    alpha = scalar_optimum(theta_prev, optima, curv)
    u = joint_minimiser(theta_prev, optima, curv).numpy()
    np.testing.assert_allclose(u / delta, alpha, rtol=1e-10)
    h_t, h_prev = torch.tensor(curv[-1]), torch.tensor(curv[:-1].sum(0))
    m = elementwise_modulation(h_t, h_prev, alpha, damping=0.0)
    np.testing.assert_allclose(m.numpy(), alpha, rtol=1e-10)
    assert pm_alpha(torch.tensor(delta), h_t, h_prev) == pytest.approx(alpha, rel=1e-10)


def test_modulation_is_the_curvature_ratio_of_the_joint_minimum():
    theta_prev, optima, curv = _problem(7)
    optima[:-1] = theta_prev
    delta = optima[-1] - theta_prev
    u = joint_minimiser(theta_prev, optima, curv).numpy()
    h_t, h_prev = torch.tensor(curv[-1]), torch.tensor(curv[:-1].sum(0))
    m = elementwise_modulation(h_t, h_prev, 0.5, damping=0.0)
    np.testing.assert_allclose(m.numpy() * delta, u, rtol=1e-9)
    assert float(m.min()) >= 0 and float(m.max()) <= 1


def test_damping_pulls_flat_elements_to_the_scalar():
    h_t = torch.tensor([1.0, 0.0, 2.0])
    h_prev = torch.tensor([1.0, 0.0, 0.0])
    m = elementwise_modulation(h_t, h_prev, 0.3, damping=1e-2)
    assert m[1] == pytest.approx(0.3) and m[0] == pytest.approx(0.5, abs=0.01) and m[2] == pytest.approx(1.0, abs=0.01)
    with pytest.raises(ValueError, match="zero total curvature"):
        joint_minimiser(np.zeros(3), [np.zeros(3), np.ones(3)], [h_prev.numpy(), h_t.numpy()])
    with pytest.raises(ValueError, match="non-negative"):
        joint_minimiser(np.zeros(3), [np.ones(3)], [-np.ones(3)])


def _hand_case():
    """Worked by hand: one earlier task with its own optimum, the previous merged weights at 0.

    theta_{t-1} = 0, theta_1* = (1, -1, 3), h_1 = (1, 3, 1); Delta = (2, 1, 1), h_t = (1, 1, 1).
    g = h_1 ⊙ theta_1* = (1, -3, 3). (E2): m = (h_t + g / Delta) / (h_t + h_1) = (1.5/2, -2/4, 4/2)
    = (0.75, -0.5, 2), clipped to [0, 1]: (0.75, 0, 1). The curvature ratio (variant merged): h_t / (h_t + h_1)
    = (0.5, 0.25, 0.5). Scalar: (sum h_t Delta^2 + Delta . g) / sum (h_t + h_1) Delta^2 = (6 + 2) / 14 = 4/7;
    with g = 0, 6/14 = 3/7.
    """
    h_1, opt_1 = torch.tensor([1.0, 3.0, 1.0]), torch.tensor([1.0, -1.0, 3.0])
    delta, h_t = torch.tensor([2.0, 1.0, 1.0]), torch.ones(3)
    return h_1, opt_1, delta, h_t


def test_own_optima_by_hand():
    h_1, opt_1, delta, h_t = _hand_case()
    memory = OptimaMemory((3,))
    memory.add(h_1, opt_1)
    g = memory.pull(torch.zeros(3))
    np.testing.assert_allclose(g.numpy(), [1.0, -3.0, 3.0])
    alpha = pm_alpha(delta, h_t, memory.curvature, g)
    assert alpha == pytest.approx(4 / 7, rel=1e-12)
    assert alpha == pytest.approx(
        scalar_optimum(np.zeros(3), [opt_1.numpy(), delta.numpy()], [h_1.numpy(), h_t.numpy()]), rel=1e-12
    )
    assert pm_alpha(delta, h_t, memory.curvature) == pytest.approx(3 / 7, rel=1e-12)
    m = elementwise_modulation(h_t, memory.curvature, alpha, delta=delta, pull=g, damping=0.0)
    np.testing.assert_allclose(m.numpy(), [0.75, 0.0, 1.0], rtol=1e-12)
    m_merged = elementwise_modulation(h_t, memory.curvature, 3 / 7, damping=0.0)
    np.testing.assert_allclose(m_merged.numpy(), [0.5, 0.25, 0.5], rtol=1e-12)
    # the unclipped element is the exact joint minimum (E1); the clipped ones are the box's minimum
    u = joint_minimiser(np.zeros(3), [opt_1.numpy(), delta.numpy()], [h_1.numpy(), h_t.numpy()]).numpy()
    np.testing.assert_allclose(u, [1.5, -0.5, 2.0], rtol=1e-12)
    grid = np.linspace(0, 1, 1001)
    for k in range(3):
        j = [
            joint_quadratic(
                np.eye(3)[k] * a * delta.numpy()[k], [opt_1.numpy(), delta.numpy()], [h_1.numpy(), h_t.numpy()]
            )
            for a in grid
        ]
        assert abs(grid[int(np.argmin(j))] - float(m[k])) <= 1e-3


@pytest.mark.parametrize("seed", range(3))
def test_own_optima_modulation_is_the_joint_minimum_over_the_box(seed):
    theta_prev, optima, curv = _problem(seed)
    delta = optima[-1] - theta_prev
    memory = OptimaMemory((theta_prev.size,))
    w0 = np.random.default_rng(seed).normal(size=theta_prev.size)  # the running sums hold for any reference
    for h, opt in zip(curv[:-1], optima[:-1]):
        memory.add(torch.tensor(h), torch.tensor(opt - w0))
    g = memory.pull(torch.tensor(theta_prev - w0))
    np.testing.assert_allclose(g.numpy(), (curv[:-1] * (optima[:-1] - theta_prev)).sum(0), rtol=1e-9, atol=1e-12)
    h_t, h_prev, d = torch.tensor(curv[-1]), memory.curvature, torch.tensor(delta)
    alpha = pm_alpha(d, h_t, h_prev, g)
    assert alpha == pytest.approx(min(max(scalar_optimum(theta_prev, optima, curv), 0.0), 1.0), rel=1e-10)
    m = elementwise_modulation(h_t, h_prev, alpha, delta=d, pull=g, damping=0.0).numpy()
    u = joint_minimiser(theta_prev, optima, curv).numpy()
    np.testing.assert_allclose(m, np.clip(u / delta, 0.0, 1.0), rtol=1e-9)  # separable: clip is the box minimum
    inside = (u / delta > 0) & (u / delta < 1)
    assert inside.any() and not inside.all()  # the case exercises both
    np.testing.assert_allclose((m * delta)[inside], u[inside], rtol=1e-9)
    j_box = joint_quadratic(theta_prev + m * delta, optima, curv)
    rng = np.random.default_rng(seed + 200)
    for _ in range(20):
        other = np.clip(m + 0.05 * rng.normal(size=m.shape), 0.0, 1.0)
        assert joint_quadratic(theta_prev + other * delta, optima, curv) >= j_box - 1e-12


def test_no_pull_is_the_curvature_ratio_and_pull_needs_its_update():
    h_t, h_prev = torch.tensor([1.0, 2.0]), torch.tensor([3.0, 2.0])
    zero = elementwise_modulation(h_t, h_prev, 0.4, delta=torch.tensor([1.0, -2.0]), pull=torch.zeros(2), damping=0.1)
    torch.testing.assert_close(zero, elementwise_modulation(h_t, h_prev, 0.4, damping=0.1))
    # where Delta_k = 0 the merged element is 0 whatever m: alpha is reported
    m = elementwise_modulation(h_t, h_prev, 0.4, delta=torch.tensor([0.0, 1.0]), pull=torch.ones(2), damping=0.0)
    assert float(m[0]) == pytest.approx(0.4)
    with pytest.raises(ValueError, match="delta and pull together"):
        elementwise_modulation(h_t, h_prev, 0.4, pull=torch.ones(2))
    with pytest.raises(ValueError, match="shape"):
        OptimaMemory((2,)).add(torch.ones(3), torch.ones(3))
