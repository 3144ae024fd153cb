"""Validators: pure functions from a `Turn` to findings, one module per concern."""
