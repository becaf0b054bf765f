"""Paper packages: what only one paper uses, one subpackage per key of ``workflow/papers.yaml``.

``repro.papers.<key>`` holds the paper's ground-truth generator (``synth``), its experiment drivers
(``experiment``: run, aggregate, tables) and its figure builders (``figures``). Shared packages
never import from here; code moves to a shared package the day a second paper needs it.
"""
