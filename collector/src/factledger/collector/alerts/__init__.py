"""Spike alerts on reject rates: rules, evaluation, the alert loop and webhook delivery.

rules       AlertRule / AlertConfig read from TOML (`load_alert_config`)
evaluator   pure: `evaluate` (counts -> Decision per group), `step` (the state machine)
stats       window counts folded from the store's per-minute reject-rate series
payloads    the notice text, the generic JSON payload and the Slack one
notifier    webhook delivery on its own thread, retried with backoff, every try recorded
gauges      reject-rate figures for /metrics
loop        AlertLoop: the schedule, state restored from and written to the store
"""
