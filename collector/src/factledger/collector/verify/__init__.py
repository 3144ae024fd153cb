"""Verification in the service: the stage that asks the sources of truth after a verdict
(`stage`), and the sources the settings configure (`sources`)."""
