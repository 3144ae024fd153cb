"""Settling suspicions at a source of truth: what is checkable, and the verdict after."""
