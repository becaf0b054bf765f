"""Methods: one module per method or baseline family."""
