"""Multimodal dataset distillation in a frozen feature space: MDA-DD and its baselines.

- :mod:`~repro.methods.distill.features`: frozen-encoder features of a paired image-caption corpus
  (:class:`SplitFeatures`, the HDF5 cache).
- :mod:`~repro.methods.distill.core`: the distilled set, the feature standardisation, the
  ``DISTILLERS`` registry and :func:`distill`.
- :mod:`~repro.methods.distill.student`: the retrieval student (dual projection heads), its
  InfoNCE training and the TR/IR@K evaluation of a distilled set.
- :mod:`~repro.methods.distill.mdadd`: MDA-DD (SOCM over a dynamic staggered model queue).
- :mod:`~repro.methods.distill.baselines`: random, herding, CovMatch-style, LoRS-style, full.

Each method module registers its methods in ``DISTILLERS``; importing this package imports them,
so the registry is complete whatever a caller imports from it (as timm's ``models/__init__``).
"""

from repro.methods.distill import baselines, mdadd  # noqa: F401  (register the methods)
from repro.methods.distill.core import DISTILLERS, DistilledSet, distill, standardised

__all__ = ["DISTILLERS", "DistilledSet", "distill", "standardised"]
