"""The set-ups of each framework family (see `registry.SetUp`)."""
