"""matt: Model-Aware Tokenizer Transfer (arXiv 2510.21954).

- :mod:`.corpus`: the offline texts (English from Python's ``pydoc_data``, Ukrainian words from the
  ``faker`` package's ``uk_UA`` providers) and the evaluation items.
- :mod:`.tokens`: source and target tokenisers, byte offsets, and segment alignment.
- :mod:`.init`: heuristic initialisations of the new embeddings (mean, FVT, FOCUS).
- :mod:`.aim`: the AIM warm-up (attention-influence modelling) and the networks it reads.
- :mod:`.experiment`: LM training at a fixed budget, evaluation, recovery and the summary.
- :mod:`.figures`: fig1.

Deviations from the paper and its reference code (ybochkov/matt; the AIM definition follows the
spec's reading of that code, which was not itself re-read for this build):

- Ukrainian "text" is sentences drawn from a fixed random bigram chain over faker's ``uk_UA`` word
  lists (no running Ukrainian prose ships offline), not web text.
- Segment boundaries are found on byte offsets, not character offsets (the same segments unless
  both tokenisers split one character at the same byte).
- FOCUS's auxiliary embeddings are PPMI + SVD of token co-occurrence counts, not fastText; a new
  token never seen in the text falls back to the mean of the source embeddings (not a random draw).
- Next-token training updates only the new (tied) embedding rows, not the whole model.
- The budget is counted in target tokens (and CPU-seconds are recorded), not GPU-hours.
- The target tokenizer's pre-tokenizer is plain ByteLevel, so SmolLM2's digit splitting is lost.
- WECHSEL and TokAlign are not built (they need bilingual or parallel resources not available offline).
"""
