"""Data: synthetic generators with known ground truth, and fetchers of real data."""
