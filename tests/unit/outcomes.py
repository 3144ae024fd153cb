"""The three verification outcomes by their short names, for the verifier tests' tables."""

from factledger.processors.verification.base import VerificationOutcome

CONFIRMED = VerificationOutcome.CONFIRMED
REFUTED = VerificationOutcome.REFUTED
UNVERIFIABLE = VerificationOutcome.UNVERIFIABLE
