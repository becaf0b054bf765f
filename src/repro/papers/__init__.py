"""One package per paper (``repro.papers.<key>``): what only that paper uses.

Each holds its ground-truth generator (``synth``), its experiment drivers (``experiment``: run,
aggregate, tables) and its figure builders with its colours (``figures``), and mirrors
``workflow/rules/<key>.smk``, ``workflow/scripts/<key>/``, ``workflow/claims/<key>.yaml``,
``workflow/schemas/<key>.schema.yaml`` and ``tests/<key>/``. Shared packages (``repro.methods``,
``repro.wsi``, ...) never import a paper; code moves to one of them the day a second paper needs it.
"""
