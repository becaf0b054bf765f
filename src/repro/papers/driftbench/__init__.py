"""driftbench: "DriftBench: Models Recall What They Violate" (arXiv 2604.28031), paper 3 of
``workflow/papers.yaml``. Reference code: kruthof/driftbench (commit 7aed87b), read for formats
and definitions; the harness here is our own.

- :mod:`~repro.papers.driftbench.briefs`: the brief schema (released, closed) plus our machine
  checks; 14 briefs written for this project (``briefs.yaml``).
- :mod:`~repro.papers.driftbench.harness`: the four conditions, the system prompt, the restatement
  probe, and the runner (any :class:`repro.llm.LanguageModel`; temperature is the model's preset).
- :mod:`~repro.papers.driftbench.agents`: scripted agents with planted violations and recall.
- :mod:`~repro.papers.driftbench.scoring`: rule-based checker, rubric judge (``repro.llm.judge``),
  probe recall, KBV, judge under-detection.
- :mod:`~repro.papers.driftbench.experiment`: judging, per-run tables, metrics, released format.
- :mod:`~repro.papers.driftbench.figures`, :mod:`~repro.papers.driftbench.grid`.

Choices the paper leaves open
-----------------------------
- Our wording of every prompt (same turn structure, checkpoint positions and section list as the
  reference; the brief laid out as the reference renders it, ``briefs.brief_text``).
- Complexity rubric (0-3): banned moves the judge finds taken (we have no "different study" 4).
- Tokens are counted as words and punctuation (``scoring.token_count``), the same for every model.
- The rule judge reads the design before the constraint checklist (keywords cannot tell a restated
  constraint from a design choice); a model judge reads the whole final proposal.
- A "stretched or ambiguously handled" constraint (the reference rubric's adherence 3), which the
  rubric leaves to the judge: a number at its limit, a forbidden item named with a qualifier, a
  required one never stated plainly (``scoring`` docstring). The rule judge sees the last two (it
  reads no numbers), the checker all three. Two or more stretched and none violated also score 3
  (the anchors name no lower score without a violation).
- Token budgets: the reference gives each reply the model's ``max_tokens`` (4,096 for its subjects)
  and each probe 1,024; ours are the preset's ``generation.max_new_tokens`` and
  ``probe_max_new_tokens`` (smoke 64 and 64, small 96 and 96, paper 1,024 and 512: SmolLM2's context
  of 8,192 tokens cannot hold eight 4,096-token turns).
- Units: one run = brief x repetition; conditions share seeds per unit (``harness`` docstring).

Deviations
----------
- Models: SmolLM2-135M-Instruct (local, temperatures 0.7 and 1.0) and planted scripted agents, not
  the paper's seven API/open-weight models; any OpenAI-compatible endpoint runs through ``llm:``.
- Judge: the rule judge (deterministic) or a local model judge through ``repro.llm.judge``, not a
  frontier LLM with calibration examples; its under-detection is measured against our rule-based
  checker instead of blind human raters (our addition, as the spec asks).
- Adherence is also scored by the checker (machine-checkable constraints of our briefs only).
- Rigor pushes and the follow-up studies are not rebuilt.
"""
