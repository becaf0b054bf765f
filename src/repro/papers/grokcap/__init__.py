"""grokcap: "Model Capacity Determines Grokking through Competing Memorisation and Generalisation
Speeds" (arXiv 2605.09724), paper 18 of ``workflow/papers.yaml``.

- :mod:`~repro.papers.grokcap.synth`: modular arithmetic data and random-label data of equal size (the
  ground truth: the task has a rule, the random labels have none).
- :mod:`~repro.papers.grokcap.experiment`: one grid cell (task x width x seed), and the aggregation
  of all runs into ``results/grokcap/metrics.json`` (T_mem(P), T_gen(P), power laws, crossing,
  grokking threshold, capacity).
- :mod:`~repro.papers.grokcap.figures`: Fig. 1 to 3 and Table 1, and the paper's colours.
- :mod:`~repro.papers.grokcap.grid`: the part of the preset each rule receives (read at parse time).

The method itself (the transformer, training to the 99% thresholds, censored power-law fits,
crossings, capacity) is paper-agnostic and lives in :mod:`repro.methods.grokking`. This package
``__init__`` stays light: the rule file imports :mod:`~repro.papers.grokcap.grid` at parse time.
"""
