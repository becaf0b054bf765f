"""What only one paper uses: ``repro.papers.<key>`` (its experiment drivers, figures, generator).

Shared packages (``repro.methods``, ``repro.rl``, ...) never import from here.
"""
