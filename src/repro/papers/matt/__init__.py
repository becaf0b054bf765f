"""matt: Model-Aware Tokenizer Transfer (arXiv 2510.21954).

- :mod:`.corpus`: the offline texts (English from Python's ``pydoc_data``, Ukrainian words from the
  ``faker`` package's ``uk_UA`` providers) and the evaluation items.
- :mod:`.tokens`: source and target tokenisers, byte offsets, and segment alignment.
- :mod:`.init`: heuristic initialisations of the new embeddings (mean, FVT, FOCUS).
- :mod:`.aim`: the AIM warm-up (attention-influence modelling) and the networks it reads.
- :mod:`.experiment`: LM training at a fixed budget, evaluation, recovery and the summary.
- :mod:`.figures`: fig1.
"""
