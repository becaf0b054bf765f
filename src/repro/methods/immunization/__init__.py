"""Immunization against harmful fine-tuning by plateau and curvature conditioning (issue 26, paper ``immunize``).

A paper-agnostic method package until the paper's DAG exists (a ``repro.papers.immunize`` package
implies its rules, claims and schema): ``curvature`` (Hessian-vector products, extremal eigenvalues
by the shared Lanczos, condition number), ``regularizers`` (the condition-number baseline's R_well
and R_ill, the plateau term), ``train`` (immunization of a linear extractor, the probe adversary).
"""
