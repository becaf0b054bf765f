"""groupfdr: "Model-Agnostic FDR Control via Group Gaussian Mirror and Permutation SHAP" (paper 12).

- :mod:`.grid`: the DAG's grid (setting x method x chunk) and each rule's part of the preset; pure
  Python, imported by ``workflow/rules/groupfdr.smk`` at parse time.
- :mod:`.synth`: the simulated AR-lag grouped designs with planted true groups.
- :mod:`.experiment`: replicate chunks, the aggregate metrics, the block-size-1 check, the tables.
- :mod:`.figures`: Fig. 1, Fig. 2 and the paper's colours.

The selectors (``{method}`` values) register themselves in :mod:`repro.methods.fdr_selectors`; the
mirror statistics live in :mod:`repro.methods.mirror`, the real-data loader in
:mod:`repro.data.grouped_tables`. This module stays light: the rule file imports from this package.
"""
