"""Measurement scripts: dataset converters, detection rates on real data, validator throughput.

Run from the repository root, e.g. `.venv/bin/python -m benchmarks.measure_datasets`.
"""
