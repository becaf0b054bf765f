"""MCPO (NeurIPS 2026): mode-controlled policy optimisation, an alpha-divergence dial for KL-regularised RL.

The method lives in :mod:`repro.rl.alpha_divergence` (shared); this package holds task (i)'s
generator (:mod:`.synth`), the training / evaluation runs (:mod:`.experiment`), the DAG grid
(:mod:`.grid`) and the figures (:mod:`.figures`).
"""
