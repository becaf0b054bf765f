"""immunize: immunization against harmful fine-tuning by plateau and curvature conditioning.

The method and its baselines live in ``repro.methods.immunization``; this package holds the digits
tasks (``synth``), the experiment (``experiment``) and the figures (``figures``).
"""
