"""The FactLedger service: OTLP/HTTP receiver, query API, store writer, alert loop."""
