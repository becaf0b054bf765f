"""TMEvolve: "Modeling Whole-Slide Images as Dynamic Tumor Microenvironment Fields" (NeurIPS 2026, arXiv 2609.34451).

The paper's own code; the method itself is shared (:mod:`repro.methods.tmevolve`, which registers
TMEvolve, its ablations and its Q x K grid in the MIL registry of :mod:`repro.methods.mil`), and so
is the WSI stage that feeds it (:mod:`repro.wsi`).

- :mod:`~repro.papers.tmevolve.grid`: the runs (``task/method``) a preset asks for; pure Python,
  read by ``workflow/rules/tmevolve.smk`` at parse time.
- :mod:`~repro.papers.tmevolve.experiment`: the tasks (survival, subtype, gene), one training fold,
  fold summaries, ``metrics.json``, Tables 1/3/4 and the Fig. 3 trace.
- :mod:`~repro.papers.tmevolve.figures`: Fig. 3 and the paper's method colours.
- :mod:`~repro.papers.tmevolve.synth`: planted MIL bags without images (fast tests, contract files)
  and, version 2, the spatial cohort: composition drawn first, arrangement second, labels set by
  patch-level tumour-lymphocyte adjacency (the main task; version 1's WSI cohort is the control).

This module stays light (no numpy or torch): rule files import from this package at parse time.
"""
