"""immunize: immunization against harmful fine-tuning by plateau and curvature conditioning (issue 26)."""
