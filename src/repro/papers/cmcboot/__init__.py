"""cmcboot: "Model-based Bootstrap of Controlled Markov Chains" (NeurIPS 2026, arXiv 2605.12410).

Coverage of model-based bootstrap, episodic bootstrap and plug-in CLT intervals on RiverSwim.
The method itself is shared (:mod:`repro.methods.cmc_bootstrap`); this package holds what only the
paper's experiment uses:

- :mod:`~repro.papers.cmcboot.synth`: RiverSwim, the chain with known kernel and values;
- :mod:`~repro.papers.cmcboot.grid`: setting names and the preset keys each step reads (light: the
  rule file imports it at parse time);
- :mod:`~repro.papers.cmcboot.experiment`: intervals per chunk of Monte Carlo replicates, the
  aggregate coverage table and metrics (the interval methods are registered there);
- :mod:`~repro.papers.cmcboot.figures`: Fig. 1, Fig. 2, Table 1 and the methods' colours.

This module stays light (no numpy): importing the package must not cost a rule file anything.
"""
