"""Span normalization: the attribute conventions agents emit, mapped onto one vocabulary."""
