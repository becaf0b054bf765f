"""Tokenizer transfer: moving a pretrained language model to a new tokenizer.

- :mod:`.init`: initialisations of the new tokens' embeddings (the mean floor, FVT, FOCUS);
- :mod:`.aim`: MATT's Attention Influence Modelling warm-up of the new embeddings (a distillation of
  the source model's attention influences into the target tokenisation);
- :mod:`.ntp`: next-token training of the new embeddings with the network frozen (the baseline MATT
  is compared with at equal compute).

The experiment that compares them (Model-Aware Tokenizer Transfer) is ``repro.papers.matt``.
"""
