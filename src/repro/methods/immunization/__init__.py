"""Immunization against harmful fine-tuning by plateau and curvature conditioning (paper ``immunize``).

Paper-agnostic: ``curvature`` (Hessian-vector products, extremal eigenvalues by the shared Lanczos,
condition number), ``regularizers`` (the condition-number baseline's R_well and R_ill, the plateau
term), ``train`` (the defences on a linear extractor: none, condnum, booster, ours; the probe
adversary). The paper's tasks, experiment and figures are in ``repro.papers.immunize``.
"""
