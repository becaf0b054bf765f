"""Variance formulas and bootstraps of repro.methods.cmc_bootstrap against Monte Carlo."""

import numpy as np

from repro.papers.cmcboot.synth import riverswim
from repro.papers.cmcboot.experiment import make_context, simulate_data
from repro.methods import cmc_bootstrap as cb

CFG = {"levels": [0.9], "n_boot": 10, "target_right_prob": 0.8,
       "behaviour": {"sticky": {"stick": 0.5, "p_start": 0.2, "p_end": 0.8}}}


def test_clt_variance_of_kernel_matches_monte_carlo():
    """Var(P^(t|s,a)) = p (1 - p) / N(s,a) against the variance of P^ over M = 3000 independent data
    sets of a small chain (the 2-state-like top of RiverSwim is not needed: the first three states
    are visited often under the sticky policy). The Monte Carlo variance has relative standard error
    sqrt(2 / (M - 1)) ~ 0.026 (near-normal P^); the plug-in average of p(1-p)/N carries an O(1/N)
    bias (N >= ~150 here, under 2%). Tolerance: 4 SE + 3% = 13.5% relative."""
    ctx = make_context(CFG)
    M = 3000
    data = simulate_data(ctx, "n1500_h1500_sticky", M, np.random.default_rng(0))
    P_hat, visited = cb.empirical_kernel(data.counts)
    std = cb.clt_std(data.counts, ctx.model.R, ctx.model.gamma, ctx.pi_target, ctx.support)
    entries = np.argwhere(ctx.support)
    keep = [k for k, (s, a, t) in enumerate(entries) if s <= 2]  # well-visited states
    assert visited[:, :3].all()
    mc_var = P_hat[:, ctx.support].var(0, ddof=1)[keep]
    clt_var = (std["P"] ** 2).mean(0)[keep]
    tol = 4 * np.sqrt(2 / (M - 1)) + 0.03
    np.testing.assert_allclose(clt_var, mc_var, rtol=tol)


def test_delta_method_variance_of_value_matches_monte_carlo():
    """Delta-method standard error of V^pi and V* against the Monte Carlo spread of the estimates
    over M = 400 data sets of 20,000 transitions (relative SE of a standard deviation ~ 1/sqrt(2M)
    = 3.5%; delta-method bias at this n is a few percent): tolerance 15% relative."""
    ctx = make_context(CFG)
    data = simulate_data(ctx, "n20000_h100_sticky", 400, np.random.default_rng(1))
    P_hat, _ = cb.empirical_kernel(data.counts)
    est = cb.targets(P_hat, ctx.model.R, ctx.model.gamma, ctx.pi_target, ctx.support)
    std = cb.clt_std(data.counts, ctx.model.R, ctx.model.gamma, ctx.pi_target, ctx.support)
    for t in ("V_pi", "V_star", "Q_star"):
        np.testing.assert_allclose(std[t].mean(0), est[t].std(0, ddof=1), rtol=0.15)


def test_model_bootstrap_spread_matches_clt_for_a_long_chain():
    """Two routes to the sampling spread of P^: the model-based bootstrap (B = 400 draws; relative
    SE of a standard deviation 1/sqrt(2B) = 3.5%) and the CLT formula p(1-p)/N, on one 5,000-step
    chain. Tolerance 4 SE + 5% (the bootstrap visit counts fluctuate around N) = 19%."""
    ctx = make_context(CFG)
    data = simulate_data(ctx, "n5000_h5000_sticky", 1, np.random.default_rng(2))
    P_star = cb.model_bootstrap_kernels(data.counts, cb.empirical_initial(data.starts), data.design,
                                        n_boot=400, rng=np.random.default_rng(3))
    std = cb.clt_std(data.counts, ctx.model.R, ctx.model.gamma, ctx.pi_target, ctx.support)
    boot_sd = P_star[0][:, ctx.support].std(0, ddof=1)
    entries = np.argwhere(ctx.support)
    keep = [k for k, (s, a, t) in enumerate(entries) if s <= 3]
    np.testing.assert_allclose(boot_sd[keep], std["P"][0][keep], rtol=4 / np.sqrt(800) + 0.05)
    # centred on the estimate: bootstrap mean within 4 bootstrap SE of P^
    P_hat, _ = cb.empirical_kernel(data.counts)
    mean_err = np.abs(P_star[0].mean(0)[ctx.support] - P_hat[0][ctx.support])[keep]
    assert np.all(mean_err <= 4 * boot_sd[keep] / np.sqrt(400))


def test_episodic_bootstrap_resamples_whole_episodes():
    """Every bootstrap data set is a sum of whole data episodes: its count of episode starts equals
    the number of episodes, and with one episode every resample is the data (degenerate)."""
    m = riverswim()
    counts = np.zeros((1, 3, 6, 2, 6))
    counts[0, 0, 1, 1, 2] = 4
    counts[0, 1, 2, 0, 1] = 3
    counts[0, 2, 0, 0, 0] = 5
    P_star = cb.episodic_bootstrap_kernels(counts, n_boot=200, rng=np.random.default_rng(0))
    # row (1, RIGHT) is visited only in episode 0: whenever it is, P^* puts all its mass on state 2
    visited = np.isclose(P_star[0, :, 1, 1, 2], 1.0)
    assert 0.5 < visited.mean() < 0.85  # P(episode 0 drawn) = 1 - (2/3)^3 = 0.70
    single = cb.episodic_bootstrap_kernels(counts[:, :1], n_boot=20, rng=np.random.default_rng(0))
    assert np.all(single == single[:, :1])
    del m


def test_per_step_policy_estimate_falls_back_to_stationary():
    step_counts = np.zeros((2, 3, 2))   # H = 2 steps, S = 3 states, A = 2
    step_counts[0, 0] = [1, 3]
    fallback = np.array([[0.5, 0.5], [0.9, 0.1], [0.2, 0.8]])
    pi = cb.empirical_step_policy(step_counts, fallback)
    np.testing.assert_allclose(pi[0, 0], [0.25, 0.75])
    np.testing.assert_allclose(pi[0, 1:], fallback[1:])
    np.testing.assert_allclose(pi[1], fallback)
