"""What the trace records: whether calls succeeded, what they fetched and reached."""
