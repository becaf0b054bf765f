"""Opinion dynamics with deep MARL: the consensus and truth-finding game (paper 5, arXiv 2606.07487).

Modules: :mod:`~repro.papers.opinion.graphs` (social graphs and the edge-list loader),
:mod:`~repro.papers.opinion.game` (the vectorised game), :mod:`~repro.papers.opinion.baselines`
(scripted policies), :mod:`~repro.papers.opinion.experiment` (train, evaluate, aggregate),
:mod:`~repro.papers.opinion.figures`; the learned agents are :mod:`repro.rl.marl`.
"""
