"""Convex tuning of the soft-margin parameter C (placeholder until the C-tuning work lands)."""
