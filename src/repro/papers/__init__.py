"""What only one paper uses: one package per paper key of ``workflow/papers.yaml`` (DESIGN.md, Layout).

``repro.papers.<key>`` holds the paper's ground-truth generator (``synth``), its experiment drivers
(``experiment``) and its figure builders (``figures``). Shared packages never import from here.
"""
