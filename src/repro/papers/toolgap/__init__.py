"""toolgap: "Model-Adaptive Tool Necessity Reveals the Knowing-Doing Gap in LLM Tool Use"
(arXiv 2605.14038), paper 13 of ``workflow/papers.yaml``; the first language-model paper.

- :mod:`~repro.papers.toolgap.synth`: arithmetic families and a generated knowledge base (planted
  truth: what a tiny model was trained on), the tool-call syntax and its detector, answer checking,
  the tiny models' corpus, and the TruthfulQA CSV loader (the real path).
- :mod:`~repro.papers.toolgap.experiment`: model-adaptive necessity, behaviour, mismatch, probes,
  the trajectory split, and the aggregation into ``results/toolgap/metrics.json``.
- :mod:`~repro.papers.toolgap.figures`: Fig. 1, Fig. 2, Table 1 and the colours.
- :mod:`~repro.papers.toolgap.grid`: the part of the preset each rule receives (read at parse time).

Every model goes through :mod:`repro.llm` (SmolLM2 via ``repro.llm.load``; tiny transformers
trained with ``repro.llm.tiny.train_tiny``); the probes are :mod:`repro.probes`.
"""
