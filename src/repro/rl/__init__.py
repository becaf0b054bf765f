"""Reinforcement-learning tools shared by the RL papers: finite MDPs, chain simulation, PPO.

- :mod:`repro.rl.mdp`: exact policy evaluation (V^pi, Q^pi by a linear solve), value and policy
  iteration (V*, Q*), greedy policies and the derivative of a value with respect to the kernel.
- :mod:`repro.rl.simulate`: a finite controlled Markov chain simulator vectorised over many chains
  (one Python loop over time steps, numpy over chains), with stationary, nonstationary and
  history-dependent behaviour policies.
- :mod:`repro.rl.ppo`: PPO-clip with GAE for a Gaussian policy on continuous actions (torch; import
  it as ``repro.rl.ppo``: it is not re-exported here, so that ``import repro.rl`` stays numpy-only).
- :mod:`repro.rl.alpha_divergence`: the alpha-divergence to the reward-tilted target of KL-regularised
  RL and its grouped self-normalised (baseline-centred) policy-gradient estimators, with the
  reverse-KL RLOO loss they reduce to at alpha = 0 (torch; import it by its module path, like ppo).
- :mod:`repro.rl.td3bc`: TD3+BC (Fujimoto & Gu 2021), offline TD3 with a behaviour-cloning term, with its
  training diagnostics, and online TD3 (Fujimoto et al. 2018) whose replay buffer is a behaviour dataset
  (torch; import it by its module path, like ppo).

Every function accepts a batch of kernels ``P`` of shape ``(..., S, A, S)`` where that is natural,
so thousands of bootstrap kernels are evaluated in one call.
"""

from repro.rl.mdp import (greedy_policy, policy_evaluation, policy_iteration, policy_kernel,
                          value_gradient, value_iteration)
from repro.rl.simulate import (MarkovPolicy, StickyDriftPolicy, simulate_counts, simulate_trajectories)

__all__ = ["greedy_policy", "policy_evaluation", "policy_iteration", "policy_kernel", "value_gradient",
           "value_iteration", "MarkovPolicy", "StickyDriftPolicy", "simulate_counts", "simulate_trajectories"]
