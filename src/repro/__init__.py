"""neurips26-repro: rebuild NeurIPS 2026 figures from raw data."""
