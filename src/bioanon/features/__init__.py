"""Feature extractors: raw biometric records in, FeatureTable out."""
