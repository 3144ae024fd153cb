"""Verdict export: every verdict version sent where teams already look (OTel evaluation
events, Phoenix, Langfuse, MLflow, Datadog), through a bounded, durable outbox."""
