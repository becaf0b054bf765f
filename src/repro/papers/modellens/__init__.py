"""modellens: "ModelLens: Finding the Best for Your Task from Myriads of Models" (arXiv 2605.07075).

- :mod:`.grid`: the DAG's seeds and each rule's part of the preset; pure Python, imported by
  ``workflow/rules/modellens.smk`` at parse time.
- :mod:`.synth`: the synthetic leaderboard with planted capabilities, text cards and known truth.
- :mod:`.experiment`: one leaderboard per seed, every recommender, evaluation by split, aggregate.
- :mod:`.figures`: Fig. 1 (NDCG@K by split), Fig. 2 (regret vs cost) and the colours.

The method lives in :mod:`repro.methods.modellens`, the baselines in :mod:`repro.methods.recommenders`,
the ranking metrics in :mod:`repro.metrics.ranking`, the real-dump loader in :mod:`repro.data.leaderboard`.
"""
