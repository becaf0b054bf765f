"""Whole-slide images: reading (OpenSlide), tissue detection, patching, patch features, cohort bags.

The preprocessing stage shared by the pathology papers (TMEvolve first): ``reader`` -> ``tissue``
-> ``patching`` -> ``features`` -> ``bags``; ``pipeline`` holds one function per workflow rule and
``cohort`` the slide lists of synthetic and remote cohorts.
"""
