"""evalmeta: "Models That Know How Evaluations Are Designed Score Safer" (arXiv 2605.28591), paper 2
of ``workflow/papers.yaml``.

- :mod:`~repro.papers.evalmeta.corpus`: the seven-trait corpus, its word-matched control, and the
  topic-only control (our addition); planted example exchanges at smoke.
- :mod:`~repro.papers.evalmeta.suites`: templated stand-ins for the five suites (six columns), each
  item in an eval-like and a deployment-like phrasing; a loader of real items (JSONL).
- :mod:`~repro.papers.evalmeta.scoring`: the judge (refusal, harmful action, four awareness levels),
  log-probability scoring (labelled variant), agreement with ``labelled.yaml``, paired differences.
- :mod:`~repro.papers.evalmeta.experiment`: data, tiny base, LoRA with the best held-out checkpoint,
  evaluation, aggregation.
- :mod:`~repro.papers.evalmeta.probe`: the knowledge probe of the tuned adapters (a diagnostic, Table 2):
  absorption of fresh corpus documents, true/false statements about evaluation design.
- :mod:`~repro.papers.evalmeta.figures`: Table 1, Fig. 1, Fig. 2.
- :mod:`~repro.papers.evalmeta.grid`: the part of the preset each rule receives (parse time).
"""
