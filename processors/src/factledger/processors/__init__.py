"""Pure processing: the turn model, transcript loading, validators, verdicts, the in-loop guard.

No network, database or web framework code lives here.
"""
