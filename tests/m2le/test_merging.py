"""HIM's element-wise merge against closed forms on a quadratic with known diagonal Hessians."""

import numpy as np
import pytest
import torch

from repro.methods.merging import (elementwise_modulation, joint_minimiser, joint_quadratic, pm_alpha,
                                   scalar_optimum)


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
