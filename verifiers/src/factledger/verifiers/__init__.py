"""Sources of truth that settle suspicions: git repositories, links, a workspace, plugins.

Each is a `processors.verification.base.Verifier`; they use the standard library only, so
the light agent install can verify in its loop as the service does after a verdict.
"""
