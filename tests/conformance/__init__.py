"""Conformance: real agent frameworks, instrumented as their docs say, against a real
`factledger serve` and a scripted LLM; each request must give one right turn."""
