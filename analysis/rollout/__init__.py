"""Rollout analysis of whole matches: per-move equity, stored results, per-player summaries."""
