"""matt: Model-Aware Tokenizer Transfer (arXiv 2510.21954).

- :mod:`.corpus`: the offline texts (English from Python's ``pydoc_data``, Ukrainian words from the
  ``faker`` package's ``uk_UA`` providers) and the evaluation items.
- :mod:`.tokens`: source and target tokenisers, byte offsets, and segment alignment.
- :mod:`.init`: heuristic initialisations of the new embeddings (mean, FVT, FOCUS).
- :mod:`.aim`: the AIM warm-up (attention-influence modelling) and the networks it reads.
- :mod:`.experiment`: LM training at a fixed budget, evaluation, recovery and the summary.
- :mod:`.figures`: fig1.

Deviations from the paper and its reference code (ybochkov/matt, re-read for this build: aim_impl.py
at fb9ba34, aim.py, modeling/base.py, config.py, preparation.py at 6510a1e; :mod:`.aim` lists the
definitions matched: pairs i <= j per row and head, the last of the first n_layers layers, pooled
MSE, AdamW with decay 0.01, gradient clip 1.0, shuffled passes):

- Ukrainian "text" is sentences drawn from a fixed random bigram chain over faker's ``uk_UA`` word
  lists (no running Ukrainian prose ships offline), not web text.
- Segment boundaries are found on byte offsets, not character offsets (the same segments unless
  both tokenisers split one character at the same byte).
- FOCUS's auxiliary embeddings are PPMI + SVD of token co-occurrence counts, not fastText; a new
  token never seen in the text falls back to the mean of the source embeddings (not a random draw).
- Next-token training updates only the new (tied) embedding rows, not the whole model.
- The budget is counted in target tokens (and CPU-seconds are recorded), not GPU-hours.
- The target tokenizer's pre-tokenizer is plain ByteLevel, so SmolLM2's digit splitting is lost.
- AIM runs in float32 on CPU (the reference: bf16 mixed precision on GPU), for a few steps over
  texts cut to ``context`` tokens at a word boundary (the reference: one epoch, 256-512 tokens).
- AIM's learning rate at small is 1e-2, not the reference's 1e-4: in 8 steps 1e-4 moves the new rows
  by 0.06% and lowers the AIM loss on held-out rows by 0.9%; 1e-2 lowers it by 20% (chosen on the AIM
  loss, not a task score). The paper preset keeps 1e-4.
- WECHSEL and TokAlign are not built (they need bilingual or parallel resources not available offline).
"""
