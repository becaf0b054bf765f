"""matt: Model-Aware Tokenizer Transfer (arXiv 2510.21954).

- :mod:`.corpus`: the offline texts (English from Python's ``pydoc_data``, Ukrainian words from the
  ``faker`` package's ``uk_UA`` providers) and the evaluation items.
- :mod:`.tokens`: source and target tokenisers, byte offsets, and segment alignment.
- :mod:`repro.methods.tokenizer_transfer` (the methods): ``init`` (heuristic initialisations of the new
  embeddings: mean, FVT, FOCUS), ``aim`` (the AIM objective and the networks it reads) and ``ntp``
  (next-token training of the new rows).
- :mod:`.matched`: the paper's comparison, the claims' arm: from FOCUS, MATT (AIM only) against
  next-token training of the new rows, matched on measured CPU time of the training loop, evaluated
  straight after.
- :mod:`.experiment`: the token-budget variant (each initialisation, MATT as FOCUS + AIM warm-up, then
  next-token training to budgets of target tokens), evaluation, recovery and the summary.
- :mod:`.figures`: fig1, table1 (the variant), table2 (the paper's comparison).

Deviations from the paper and its reference code (ybochkov/matt, re-read for this build: aim_impl.py
at fb9ba34; aim.py, modeling/base.py, config.py, preparation.py and README.md at 6510a1e; the ``aim``
module lists the definitions matched: pairs i <= j per row and head, the last of the first n_layers
layers, pooled MSE, AdamW with decay 0.01, gradient clip 1.0, shuffled passes):

- Ukrainian "text" is sentences drawn from a fixed random bigram chain over faker's ``uk_UA`` word
  lists (no running Ukrainian prose ships offline), not web text.
- Segment boundaries are found on byte offsets, not character offsets (the same segments unless
  both tokenisers split one character at the same byte).
- FOCUS's auxiliary embeddings are PPMI + SVD of token co-occurrence counts, not fastText; a new
  token never seen in the text falls back to the mean of the source embeddings (not a random draw).
- The paper's comparison gives each arm 7 GPU-hours; here each arm's training loop gets the same CPU
  time on one core, tens of CPU-seconds at small (:mod:`.matched` says how it is measured and matched).
  Both arms, as the paper's, train only the embeddings (here the new rows; the source rows and the
  network stay frozen). The token-budget variant counts its budget in target tokens instead.
- The target tokenizer's pre-tokenizer is plain ByteLevel, so SmolLM2's digit splitting is lost.
- AIM runs in float32 on CPU (the reference: bf16 mixed precision on GPU) over texts cut to
  ``context`` tokens at a word boundary (the reference: 256-512 tokens): one pass over 64 texts in the
  paper's comparison at small (the reference: one epoch of its corpus), 8 steps in the variant.
- AIM's learning rate at small is 1e-2 in both protocols, not the reference's 1e-4: in 8 steps 1e-4
  moves the new rows by 0.06% and lowers the AIM loss on held-out rows by 0.9%; 1e-2 lowers it by 20%
  (chosen on the AIM loss, not a task score). The paper preset keeps 1e-4.
- WECHSEL and TokAlign are not built (they need bilingual or parallel resources not available offline).
"""
