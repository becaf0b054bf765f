"""Tokenizer transfer: moving a pretrained language model to a new tokenizer.

- :mod:`.init`: initialisations of the new tokens' embeddings (the mean floor, FVT, FOCUS);
- :mod:`.aim`: MATT's Attention Influence Modelling warm-up of the new embeddings (a distillation of
  the source model's attention influences into the target tokenisation).

The experiment that compares them (Model-Aware Tokenizer Transfer) is ``repro.papers.matt``.
"""
