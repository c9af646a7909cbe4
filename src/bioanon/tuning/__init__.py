"""Tuning: sweep a method over a parameter grid (:mod:`.grid_search`) and tune k of the
k-anonymity family (:mod:`.k_tuning`)."""
