"""MDA-DD: multimodal dataset distillation (NeurIPS 2026, paper 16 of ``workflow/papers.yaml``).

The method and its baselines are paper-agnostic and live in :mod:`repro.methods.distill`; this
package holds what only this paper uses:

- :mod:`~repro.papers.mdadd.synth`: the synthetic scene-caption corpus (ground-truth scenes).
- :mod:`~repro.papers.mdadd.experiment`: the corpus of the ``source`` setting, Table 1, the
  initialisation gaps and the numbers the claims read.
- :mod:`~repro.papers.mdadd.figures`: Fig. 1-3 and the methods' colours.
- :mod:`~repro.papers.mdadd.grid`: what ``workflow/rules/mdadd.smk`` needs at parse time.

Kept light (no numpy, torch or pandas here): the rule file imports from this package.
"""
