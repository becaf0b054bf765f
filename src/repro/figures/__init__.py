"""Figures: one style (``style.py``) and one builder module per figure (``<key>_<fig>.py``)."""
