"""gtp: "Generative Trajectory Planning" (NeurIPS 2026; abstract only): a diffusion prior over action
sequences as the proposal of a planner under learned dynamics, reward and value.

- :mod:`.grid`: the DAG's seeds and each rule's part of the preset; pure Python, imported by
  ``workflow/rules/gtp.smk`` at parse time.
- :mod:`.maze`: the long-horizon point-mass maze and its exact optimum (breadth-first search on the
  step lattice, with the proof that it is exact in the module docstring).
- :mod:`.data`: the goal-agnostic offline dataset (waypoint following + random), saved with its sha256.
- :mod:`.experiment`: training, receding-horizon control of every method, aggregation, Table 1.
- :mod:`.control`: gymnasium Pendulum-v1 and MountainCarContinuous-v0 (scripted behaviour data), MuJoCo
  HalfCheetah-v5 and Hopper-v5 (an online TD3 agent's replay buffer), with the same models and planners (Table 2).
- :mod:`.figures`: Fig. 1-3.

Shared pieces: the planners (MPPI, CEM, prior-seeded MPPI) in :mod:`repro.rl.planners`, the DDPM
prior in :mod:`repro.rl.diffusion_prior`, the learned models in :mod:`repro.rl.world_model`, the
model-free baseline (TD3+BC) and the online TD3 behaviour agent in :mod:`repro.rl.td3bc`, the D4RL / Minari loader in :mod:`repro.data.offline_rl`.
"""
