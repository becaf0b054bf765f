"""Data: synthetic generators with planted ground truth, and fetchers of real data."""
