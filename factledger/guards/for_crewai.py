"""The guard as a CrewAI task guardrail: a rejected reply fails the guardrail with the
nudge, CrewAI runs the task again with it, and the model answers the nudge with the
attempt's conversation in front of it.

    from factledger.guards.for_crewai import guard, guard_agent
    task = guard(Task(description="Push branch main of acme/shop.", expected_output="...",
                      agent=engineer))
    result = Crew(agents=[engineer], tasks=[task]).kickoff()   # result.raw: checked
    output = guard_agent(engineer).kickoff("Push ...")          # a lone agent: output.raw

A guardrail gets the `TaskOutput`: the reply (`raw`) and the agent executor's messages of
the attempt (`messages`: the task prompt, each tool call with its arguments, each tool's
answer, the final answer). It answers `(True, reply)` or `(False, feedback)`, and CrewAI
retries a failed one with `agent.execute_task(task, context=feedback)`, a new execution
whose executor starts with its messages cleared: the model would see the feedback
without the tool results it had, and call the tools again. So `guard` also registers a
CrewAI before-LLM-call hook that, on the first model call of such a retry (its prompt
carries the nudge), puts the attempt back: the agent's `last_messages` (what the
attempt's executor held), then the nudge as a user message. The retry's `TaskOutput`
then holds the whole turn, the nudges sent with it, so the guard counts them there.

`guard` sets `guardrail_max_retries` to `max_nudges`: CrewAI ends a task whose guardrail
still fails after those retries. That is how `on_exhausted="raise"` raises: the guardrail
fails once more with `GuardExhausted`'s text, and CrewAI raises its own error for a
guardrail that failed all its retries (a plain `Exception`, "Task failed guardrail
validation after 2 retries. Last error: the reply is still rejected ..."). A pass
leaves `raw` as it is (no extra model call); a footnoted reply becomes `raw`.

`guardrail()` is the guardrail function itself, for `Task(guardrail=...)` or a
`guardrails=[...]` list of one's own (then give the task `guardrail_max_retries` equal
to `max_nudges`, and call `carry_attempts(agent)` before the crew runs). A structured
output (`output_pydantic`, `output_json`) passes untouched. `kickoff`,
`kickoff_async`/`akickoff` and a streamed crew (`Crew(stream=True)`) run the same
guardrail. Each decision is recorded on the current span (factledger.guards.telemetry).
A lone agent (`Agent.kickoff()`, no crew) takes the same guardrail through
`guard_agent(agent)`: CrewAI re-runs its executor after a failed guardrail with the
feedback it appended cleared, so the guardrail itself keeps the attempt and its nudge
for the retry's first model call, where the same hook hands them over.
"""

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Unpack, cast

from crewai import Agent, Task
from crewai.hooks import (
    LLMCallHookContext,
    get_before_llm_call_hooks,
    register_before_llm_call_hook,
)
from crewai.utilities.i18n import I18N_DEFAULT

from factledger.guards import telemetry
from factledger.guards.policy import GuardOptions, GuardPolicy, as_sent, marked
from factledger.processors.assembly.transcript import content_text

GUARDRAIL_NAME = "factledger_guard"
"""The guardrail function's name: CrewAI's guardrail events name it by `__name__`."""


def guardrail(
    *, policy: GuardPolicy | None = None, **options: Unpack[GuardOptions]
) -> Callable[[Any], tuple[bool, Any]]:
    """The guard as a CrewAI guardrail function: `(True, reply)` for a reply that passes
    or is footnoted, `(False, nudge)` to retry, `(False, error)` when set to raise and
    still rejected. One function serves every run (the nudges sent are read from the
    output's messages); its `policy` attribute holds the options."""
    chosen = policy or GuardPolicy(**options)

    # A function, not a callable object: CrewAI reads a guardrail's source for its
    # events, and checks its signature: one positional parameter and, when annotated,
    # a real `tuple[bool, Any]` (so this module has no string annotations).
    # A lone agent's retry loses the nudge (see `guard_agent`): the attempt and its nudge
    # wait here for the retry's first model call, which `carry_attempt` hands them to.
    pending: list[list[Any]] = []

    def factledger_guard(output: Any) -> tuple[bool, Any]:
        pending.clear()
        # A task with `output_pydantic` / `output_json` gets its raw text converted after
        # the guardrails: a structured output is not a reply, and passes untouched.
        form = getattr(output, "output_format", "raw")
        if getattr(form, "value", form) != "raw":
            return True, output
        messages = list(getattr(output, "messages", None) or [])
        decision = chosen.decide(transcript_of(messages, str(getattr(output, "raw", ""))))
        telemetry.record(decision)
        if decision.action == "nudge":
            pending.append([*messages, {"role": "user", "content": decision.nudge}])
            return False, decision.nudge
        if decision.action == "raise":
            return False, str(decision.error())
        return True, decision.reply

    factledger_guard.__name__ = GUARDRAIL_NAME
    factledger_guard.policy = chosen  # type: ignore[attr-defined]
    factledger_guard.pending = pending  # type: ignore[attr-defined]
    return factledger_guard


def guard(
    task: Task,
    *,
    policy: GuardPolicy | None = None,
    **options: Unpack[GuardOptions],
) -> Task:
    """Make the guard `task`'s guardrail, with `guardrail_max_retries = max_nudges`, and
    carry each attempt into its retry (`carry_attempts`); return the task."""
    chosen = policy or GuardPolicy(**options)
    task.guardrail = guardrail(policy=chosen)
    task.guardrail_max_retries = chosen.max_nudges
    # The task resolved its guardrail when it was made and assignment does not validate:
    # its own validator resolves it again (typed as pydantic's descriptor, hence the cast).
    cast(Callable[[], object], task.ensure_guardrail_is_callable)()
    carry_attempts(*([task.agent] if task.agent is not None else []))
    return task


def guard_agent(
    agent: Agent,
    *,
    policy: GuardPolicy | None = None,
    **options: Unpack[GuardOptions],
) -> Agent:
    """Make the guard a lone agent's guardrail (`Agent.kickoff()`), with
    `guardrail_max_retries = max_nudges`; return the agent. Set to raise, CrewAI raises
    its `ValueError` ("Agent's guardrail failed validation after N retries ...").

    CrewAI appends a failed guardrail's feedback to the executor's messages, then runs
    the executor again, which starts by clearing them: the model would be asked the same
    prompt without the nudge. So the guardrail keeps the attempt and its nudge for the
    retry's first model call, where `carry_attempt` puts them in front of the model (an
    executor runs one kickoff at a time, CrewAI refuses a second: the one waiting is
    this agent's)."""
    chosen = policy or GuardPolicy(**options)
    agent.guardrail = guardrail(policy=chosen)
    agent.guardrail_max_retries = chosen.max_nudges
    carry_attempts(agent)
    return agent


def carry_attempts(*agents: Any) -> None:
    """Register (once) the global before-LLM-call hook that puts a guarded task's attempt
    in front of its retry. CrewAI copies global hooks into an agent's executor when it
    makes it; an executor made before (an agent of `agents` that already ran a task)
    gets the hook added."""
    if carry_attempt not in get_before_llm_call_hooks():
        register_before_llm_call_hook(carry_attempt)
    for agent in agents:
        hooks = getattr(getattr(agent, "agent_executor", None), "before_llm_call_hooks", None)
        if isinstance(hooks, list) and carry_attempt not in hooks:
            hooks.append(carry_attempt)


def carry_attempt(context: LLMCallHookContext) -> None:
    """On the first model call of a guarded task's retry, replace the executor's fresh
    messages (system, the task prompt with CrewAI's feedback) by the attempt's messages
    and the nudge. Runs on the executor's thread just before the call; any other call,
    and anything it does not recognise, it leaves as it is."""
    if context.iterations != 0:
        return
    task = getattr(context, "task", None)
    if task is None:
        _carry_lone(context)
        return
    if not _guarded(task):
        return
    messages = context.messages
    prompt = next((m for m in reversed(messages) if _role(m) == "user"), None)
    text = content_text(prompt.get("content")) if isinstance(prompt, Mapping) else ""
    if not marked(text):
        return
    last = getattr(context.agent, "last_messages", None) or []
    attempt: list[Any] = [m for m in last if isinstance(m, Mapping)]  # LLMMessage dicts
    if not any(_role(m) == "user" for m in attempt):
        return
    system = [m for m in messages if _role(m) == "system"][:1]
    carried = [*system, *(m for m in attempt if _role(m) != "system")]
    # In place: the executor keeps this list (CrewAI's hook contract).
    messages[:] = [*carried, {"role": "user", "content": _nudge_of(text)}]


def _carry_lone(context: LLMCallHookContext) -> None:
    """A lone agent's retry: the attempt and nudge its guardrail keeps, if it keeps one."""
    chosen = getattr(context.agent, "guardrail", None)
    pending = getattr(chosen, "pending", None)
    if getattr(chosen, "__name__", None) != GUARDRAIL_NAME or not pending:
        return
    attempt: list[Any] = [m for m in pending.pop() if isinstance(m, Mapping)]
    system = [m for m in context.messages if _role(m) == "system"][:1]
    context.messages[:] = [*system, *(m for m in attempt if _role(m) != "system")]


def _role(message: Any) -> Any:
    return message.get("role") if isinstance(message, Mapping) else None


def _guarded(task: Any) -> bool:
    if task is None:
        return False
    chosen = [getattr(task, "guardrail", None), *(getattr(task, "guardrails", None) or [])]
    return any(getattr(g, "__name__", None) == GUARDRAIL_NAME for g in chosen)


def _nudge_of(prompt: str) -> str:
    """The nudge inside CrewAI's retry prompt (its `validation_error` text, "### Previous
    attempt failed validation: {error} ### Previous result: {output} ..."): from the
    nudge's marker to where the template goes on after the error."""
    nudge = as_sent(prompt)
    template = I18N_DEFAULT.errors("validation_error")
    after_error = template.partition("{guardrail_result_error}")[2].partition("{task_output}")[0]
    if after_error and after_error in nudge:
        nudge = nudge[: nudge.index(after_error)]
    return nudge.strip()


def transcript_of(messages: Sequence[Any], reply: str) -> dict[str, Any]:
    """The executor's messages (`TaskOutput.messages`) as an OpenAI-style transcript
    ending in `reply` (they are in that shape already, tool results as strings; CrewAI
    writes a tool that raised as "Error executing tool ...")."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if not isinstance(message, Mapping):
            continue
        role = message.get("role")
        text = content_text(message.get("content"))
        if role == "user" and marked(text):
            out.append({"role": "user", "content": as_sent(text)})
        elif role in ("system", "user"):
            out.append({"role": role, "content": text})
        elif role == "assistant":
            entry: dict[str, Any] = {"role": "assistant", "content": text}
            if message.get("tool_calls"):
                entry["tool_calls"] = list(message["tool_calls"])
            out.append(entry)
        elif role == "tool":
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": str(message.get("tool_call_id", "")),
                    "content": text,
                    "is_error": text.startswith(_TOOL_ERROR),
                }
            )
    # The attempt's last message is the answer under test; the reply stands for it.
    if out and out[-1]["role"] == "assistant" and not out[-1].get("tool_calls"):
        out.pop()
    out.append({"role": "assistant", "content": reply})
    return {"messages": out}


_TOOL_ERROR = "Error executing tool"
"""How CrewAI hands the model a tool that raised (it has no tool-error type)."""
