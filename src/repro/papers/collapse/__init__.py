"""collapse: "The singular geometry of model collapse" (NeurIPS 2026 abstract 17), paper 17 of
``workflow/papers.yaml``.

- :mod:`~repro.papers.collapse.synth`: the planted labelled Gaussian mixture (the "real" data).
- :mod:`~repro.papers.collapse.experiment`: the recursion (EM on the model's own samples with an
  optional fresh-data fraction) with per-generation weights, Fisher spectrum, nullity, curvature
  and the SGLD local learning coefficient; the aggregation into ``results/collapse/metrics.json``.
- :mod:`~repro.papers.collapse.neural`: the neural part (VAE, VaDE, compact DDPM retrained on their
  own samples, with and without fresh real images) and its Hessian, Gauss-Newton, feature-rank and
  LLC diagnostics; VaDE's cluster weights and curvature as predictors of cluster loss.
- :mod:`~repro.papers.collapse.figures`: Fig. 1 to 4 and Table 1, and the paper's colours.
- :mod:`~repro.papers.collapse.grid`: the part of the preset each rule receives (read at parse time).

Paper-agnostic pieces live in shared packages: the mixture, its chart, scores and Fisher
information in :mod:`repro.methods.gmm`; the LLC estimator in :mod:`repro.stats.llc`; Lanczos on
Hessian-vector products in :mod:`repro.stats.lanczos`. This ``__init__`` stays light.
"""
