"""Whole-slide images: reading (OpenSlide), tissue detection, patching, patch features, cohort bags.

The preprocessing stage shared by the pathology papers (TMEvolve first): ``reader`` -> ``tissue``
-> ``patching`` -> ``features`` -> ``bags``; ``pipeline`` holds one function per workflow rule,
``cohort`` the slide lists of synthetic and remote cohorts, and ``synth`` the synthetic cohort
(pyramidal TIFF slides with planted tissue maps and labels) that is the stage's offline default.
Settings come from the ``wsi`` preset through :func:`repro.config.from_dict` (``TissueConfig``,
``PatchConfig``, ``SynthConfig``); this package never imports a paper.
"""
