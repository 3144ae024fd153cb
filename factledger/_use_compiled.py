"""Imported first by factledger/__init__.py: the compiled modules, when a fresh build is there.

A module of its own so that `factledger.compiled` stays free of import-time effects (the
build script loads it without importing factledger).
"""

from factledger.compiled import install

install()
