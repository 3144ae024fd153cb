"""Turn assembly: spans (or a transcript) in, whole turns out."""
