"""Delegations: the agent spans inside another agent's turn that are turns of their own.

A turn is the subtree of an outermost agent span (`assembler._agent_scopes`); the agent
spans below it are sub-agents the turn delegated to (an agent called as a tool, a managed
agent, a hand-off inside the run) or the agents a run span wraps. A sub-agent that asked
its own model something has its own account to check: the paths it says it read, the
actions it says it took, against its own tool spans. So an agent span below a turn's root
is judged as a turn of its own, nested in the enclosing one, when

- at least one LLM call whose nearest agent span is this one wrote output (its own
  model step, not only a deeper agent's), and
- none of those calls is in the enclosing turn's own conversation
  (`turn_builder.main_thread`): then the enclosing agent spoke for itself and this one
  answered it. An inner agent whose calls are the enclosing turn's conversation (a run or
  crew span around the agent that answers the user) is that turn, not a delegation.

The nested turn holds the sub-agent's whole subtree (its own delegations too, whose
answers are its tool results), and its parent is the nearest enclosing agent that is a
turn (the outermost one, or a nested one above it). Pure: spans by key in, scopes out.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import TypeAlias

SpanKey: TypeAlias = tuple[str, str]  # (trace id, span id)

_MAX_DEPTH = 256
"""Parent links followed from a span; deeper (or cyclic) chains are cut there."""


class AgentTree:
    """Each span's nearest agent span, by parent links only (a span whose parent we never
    received has none: its place in the tree is unknown)."""

    __slots__ = ("above", "agents", "depth")

    def __init__(
        self, parents: Mapping[SpanKey, SpanKey | None], agents: frozenset[SpanKey]
    ) -> None:
        self.agents = agents
        self.above: dict[SpanKey, SpanKey | None] = {}
        """Span -> the nearest agent span strictly above it."""
        for start in parents:
            path: list[SpanKey] = []
            current = parents.get(start)
            found: SpanKey | None = None
            while current is not None and len(path) < _MAX_DEPTH:
                if current in agents:
                    found = current
                    break
                if current in self.above:
                    found = self.above[current]
                    break
                path.append(current)
                current = parents.get(current)
            self.above[start] = found
            for k in path:
                if k not in self.above:
                    self.above[k] = found
        self.depth: dict[SpanKey, int] = {}
        for agent in agents:
            depth, current = 0, self.above.get(agent)
            while current is not None and depth < _MAX_DEPTH:
                depth, current = depth + 1, self.above.get(current)
            self.depth[agent] = depth

    def own_agent(self, key: SpanKey) -> SpanKey | None:
        """The agent whose own span this is: itself for an agent span, else the nearest
        agent above it."""
        return key if key in self.agents else self.above.get(key)

    def agent_chain(self, key: SpanKey) -> list[SpanKey]:
        """The agent spans that hold `key` in their subtree, innermost first."""
        chain: list[SpanKey] = []
        current = self.own_agent(key)
        while current is not None and len(chain) < _MAX_DEPTH:
            chain.append(current)
            current = self.above.get(current)
        return chain


class Delegation:
    """An agent span below a turn's root, with the spans of its subtree."""

    __slots__ = ("agent", "enclosing", "subtree")

    def __init__(self, agent: SpanKey, enclosing: SpanKey, subtree: tuple[SpanKey, ...]) -> None:
        self.agent = agent
        self.enclosing = enclosing
        """The nearest agent span above it."""
        self.subtree = subtree
        """Its spans (itself included), in the order the group holds them."""


def delegations(
    parents: Mapping[SpanKey, SpanKey | None], agents: frozenset[SpanKey]
) -> tuple[AgentTree, list[Delegation]]:
    """Every agent span with an agent above it, outer ones first, with its subtree."""
    tree = AgentTree(parents, agents)
    subtrees: dict[SpanKey, list[SpanKey]] = {
        a: [] for a in agents if tree.above.get(a) is not None
    }
    for key in parents:
        for agent in tree.agent_chain(key):
            if agent in subtrees:
                subtrees[agent].append(key)
    ordered = sorted(subtrees, key=lambda a: (tree.depth[a], a))
    out = []
    for agent in ordered:
        enclosing = tree.above[agent]
        assert enclosing is not None
        out.append(Delegation(agent, enclosing, tuple(subtrees[agent])))
    return tree, out


def own_steps(
    tree: AgentTree,
    delegation: Delegation,
    has_output: Callable[[SpanKey], bool],
) -> list[SpanKey]:
    """The LLM calls (keys for which `has_output` holds) whose own agent is the
    delegation's: its model's steps, not a deeper agent's."""
    return [
        k for k in delegation.subtree if tree.own_agent(k) == delegation.agent and has_output(k)
    ]


def is_turn_of_its_own(own: Sequence[object], enclosing_thread: Sequence[object]) -> bool:
    """A delegation is judged as a turn when its agent made model calls of its own and
    none of them is in the enclosing turn's conversation (compared by identity)."""
    if not own:
        return False
    thread = {id(s) for s in enclosing_thread}
    return not any(id(s) in thread for s in own)


def nested_turn_id(parent_turn_id: str, agent: SpanKey) -> str:
    """The nested turn's stable id: from its parent turn and its agent span, so the same
    delegation gets the same id on replay or restart, and never the parent's."""
    key = f"{parent_turn_id}/{agent[0]}/{agent[1]}"
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]
