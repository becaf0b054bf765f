"""incrimination: "Model Forensics: Investigating Whether Concerning Behavior Reflects Misalignment",
paper 14 of ``workflow/papers.yaml``. A testbed where the motive behind a concerning action is known.

- :mod:`~repro.papers.incrimination.envs`: six agentic environments, each with a concerning action,
  five binary factors and the single-factor interventions; the prompt an agent reads.
- :mod:`~repro.papers.incrimination.agents`: scripted agents with a planted motive and a CoT faithful
  at a preset rate, and any :mod:`repro.llm` model as an agent (SmolLM2-135M at small scale).
- :mod:`~repro.papers.incrimination.protocol`: the two-step protocol (hypotheses from the CoT,
  validation by interventions with Newcombe intervals, absence-of-evidence verdicts).
- :mod:`~repro.papers.incrimination.experiment`: the testbed run scored against the planted motives
  (CoT-only, interventions-only, combined; random floor, oracle ceiling), the investigation of a
  real agent, and the aggregation into metrics.json.
- :mod:`~repro.papers.incrimination.figures`: Fig. 1, Fig. 2, Table 1.

Deviations from the paper: the paper investigates frontier models (Kimi K2 Thinking and others) in
six environments of its own, with no ground truth; here the environments are small text scenarios,
the agents under investigation with a known motive are scripted, and the real model is SmolLM2-135M,
whose motive is unknown. The paper's "additional methods as appropriate" (predictions, probes) are
not rebuilt; the protocol is CoT reading plus environment interventions. SmolLM2's CoT is short: 32
new tokens at small scale (the preset's ``generation.max_new_tokens``; 256 in the paper preset).
"""
