"""RLQ-Grad: "Modeling quantum neural network gradient with reinforcement learning" (paper 6).

- :mod:`repro.papers.rlqgrad.experiment`: the measurements (gradient agreement, barren-plateau
  variance, cost per update), their aggregation into ``results/rlqgrad/metrics.json``, Tables 1-2;
- :mod:`repro.papers.rlqgrad.figures`: Figs. 1-2 and the paper's method colours.

The method itself (hybrid QNN, gradient baselines, RLQ-Grad trainer and the ``{method}`` registry)
is :mod:`repro.methods.rlqgrad`; its PPO agent is the shared :mod:`repro.rl.ppo`; the statevector
simulator and circuit gradients are :mod:`repro.quantum`. This package imports nothing at import
time (the rule file may import it while Snakemake parses).
"""
