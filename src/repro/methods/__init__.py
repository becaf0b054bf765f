"""Methods and baselines, one module per method family."""
