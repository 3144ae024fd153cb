"""Text for Slack's mrkdwn, where `<...>` is markup: `<!channel>` notifies everyone in the
channel, `<http://x|anything>` is a link dressed as anything.

Group keys (model, agent, service names) come from whoever sends spans, so every value
put into a Slack notice passes through `mrkdwn_text`. Slack's own rule: escape `&`, `<`
and `>` as HTML entities, and nothing else is read as a control sequence.
"""

from __future__ import annotations


def mrkdwn_text(value: str) -> str:
    """`value` shown as itself in a Slack mrkdwn field: no mention, link or entity."""
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
