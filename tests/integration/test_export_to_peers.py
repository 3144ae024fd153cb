"""From the agent to the judged span in Phoenix and in MLflow: an agent instrumented with
the OTel SDK sends its spans to a real peer product and to a real FactLedger service at
once (two exporters); the service, with `[export.phoenix]` or `[export.mlflow]` set,
judges the turn and its outbox puts the verdict on the reply's span there, read back
through the product's own API (Phoenix's REST API, MLflow's Python client). A reviewer's
label then replaces it."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import SpanKind, Tracer

from factledger.collector.export.settings import ExportSettings
from factledger.collector.settings import ServiceSettings
from factledger.collector.store import Store
from tests.integration.app_server import served_app
from tests.integration.peers import ROOT, mlflow_server, peer_bin, phoenix_server
from tests.integration.worker_process import wait_until

PROJECT = "release-agent"
SHA = "9d22a7c"


@pytest.fixture(scope="module")
def mlflow_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with mlflow_server(tmp_path_factory.mktemp("mlflow")) as url:
        yield url


@pytest.fixture(scope="module")
def phoenix_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with phoenix_server(tmp_path_factory.mktemp("phoenix")) as url:
        yield url


def _text(role: str, content: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": content}]}


def _agent_turn(tracer: Tracer) -> tuple[str, str]:
    """A turn whose push failed and whose reply reports it pushed, with a commit no tool
    returned; its trace id and the id of the span that produced the reply."""
    call = {"type": "tool_call", "id": "call_1", "name": "git_push", "arguments": {}}
    failed = "error: failed to push some refs to 'origin'; nothing was pushed"
    history = [_text("user", "Push the fix to main.")]
    reply_span = ""
    with tracer.start_as_current_span(
        "invoke_agent releaser",
        attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "releaser"},
    ) as root:
        outputs: list[list[dict[str, Any]]] = [
            [{"role": "assistant", "parts": [call]}],
            [_text("assistant", f"Pushed the fix to main, commit {SHA}.")],
        ]
        for output in outputs:
            with tracer.start_as_current_span("chat gpt-4o", kind=SpanKind.CLIENT) as span:
                span.set_attributes(
                    {
                        "gen_ai.operation.name": "chat",
                        "gen_ai.request.model": "gpt-4o",
                        "gen_ai.input.messages": json.dumps(history),
                        "gen_ai.output.messages": json.dumps(output),
                    }
                )
                reply_span = format(span.get_span_context().span_id, "016x")
            if output[0]["parts"] == [call]:
                tool = {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "git_push",
                    "gen_ai.tool.call.id": "call_1",
                    "gen_ai.tool.call.result": failed,
                    "error.type": "CalledProcessError",
                }
                with tracer.start_as_current_span("execute_tool git_push", attributes=tool):
                    pass
                response = {"type": "tool_call_response", "id": "call_1", "response": failed}
                history += [*output, {"role": "tool", "parts": [response]}]
    return format(root.get_span_context().trace_id, "032x"), reply_span


def _send_to_both(peer: OTLPSpanExporter, factledger_url: str, **resource: str) -> tuple[str, str]:
    """The agent's spans through the SDK's two exporters, as docs/export.md describes."""
    provider = TracerProvider(
        resource=Resource.create({"service.name": "release-agent", **resource})
    )
    provider.add_span_processor(SimpleSpanProcessor(peer))
    provider.add_span_processor(
        SimpleSpanProcessor(OTLPSpanExporter(f"{factledger_url}/v1/traces"))
    )
    try:
        return _agent_turn(provider.get_tracer("release-agent"))
    finally:
        provider.shutdown()


def _annotations(phoenix_url: str, span_id: str) -> dict[str, dict[str, Any]]:
    """Phoenix's annotations of the span, by name, as its REST API serves them."""
    answer = httpx.get(
        f"{phoenix_url}/v1/projects/{PROJECT}/span_annotations",
        params={"span_ids": span_id},
        timeout=10,
    )
    if answer.status_code == 404:  # the project exists once Phoenix stored the spans
        return {}
    answer.raise_for_status()
    return {a["name"]: a for a in answer.json()["data"]}


def _settings(tmp_path: Path, **target: dict[str, Any]) -> ServiceSettings:
    exporting = ExportSettings.from_mapping(
        {"backoff_initial_seconds": 0.2, "backoff_max_seconds": 1.0, **target}
    )
    return ServiceSettings(
        data_dir=tmp_path, grace_seconds=0.2, max_wait_seconds=5, export=exporting
    )


def _judged(url: str, trace_id: str) -> dict[str, Any]:
    """The turn FactLedger judged in trace `trace_id`, once it is stored."""

    def judged() -> dict[str, Any] | None:
        turns = httpx.get(f"{url}/api/v1/turns", params={"trace_id": trace_id}).json()
        return turns["turns"][0] if turns["turns"] else None

    wait_until(lambda: judged() is not None, 30, "the turn's verdict")
    turn = judged()
    assert turn is not None and turn["verdict"] == "reject", turn
    return turn


def _label(url: str, turn_id: str) -> None:
    label = {"label": "not_hallucination", "reviewer": "ana"}
    answer = httpx.post(f"{url}/api/v1/turns/{turn_id}/reviews", json=label)
    assert answer.status_code in (200, 201), answer.text


def test_the_verdict_shows_on_the_judged_span_in_phoenix(
    store: Store, tmp_path: Path, phoenix_url: str
) -> None:
    target = {"phoenix": {"endpoint": phoenix_url, "project": PROJECT}}
    with served_app(_settings(tmp_path, **target), store) as url:
        to_phoenix = OTLPSpanExporter(f"{phoenix_url}/v1/traces")
        trace_id, reply_span = _send_to_both(
            to_phoenix, url, **{"openinference.project.name": PROJECT}
        )
        turn = _judged(url, trace_id)
        wait_until(
            lambda: "factledger.verdict" in _annotations(phoenix_url, reply_span),
            120,
            "the verdict on the reply's span in Phoenix",
        )
        found = _annotations(phoenix_url, reply_span)
        verdict = found["factledger.verdict"]
        assert verdict["span_id"] == reply_span
        assert verdict["annotator_kind"] == "CODE"
        assert (verdict["result"]["label"], verdict["result"]["score"]) == ("reject", 0.0)
        assert (
            SHA in verdict["result"]["explanation"]
            or "git_push" in (verdict["result"]["explanation"])
        )
        assert verdict["metadata"]["factledger.turn_id"] == turn["turn_id"]
        assert {f"factledger.{kind}" for kind in turn["kinds"]} <= set(found)

        label = {"label": "not_hallucination", "reviewer": "ana"}
        answer = httpx.post(f"{url}/api/v1/turns/{turn['turn_id']}/reviews", json=label)
        assert answer.status_code in (200, 201), answer.text
        wait_until(
            lambda: (
                _annotations(phoenix_url, reply_span)["factledger.verdict"]["result"]["label"]
                == "pass"
            ),
            120,
            "the label to replace the verdict in Phoenix",
        )
        relabelled = _annotations(phoenix_url, reply_span)["factledger.verdict"]
        assert relabelled["metadata"]["factledger.cause"] == "labelled"


def _experiment(mlflow_url: str) -> str:
    answer = httpx.post(
        f"{mlflow_url}/api/2.0/mlflow/experiments/create", json={"name": "release-agent"}
    )
    answer.raise_for_status()
    return str(answer.json()["experiment_id"])


def _assessments(mlflow_url: str, trace_id: str) -> dict[str, dict[str, Any]]:
    """The trace's assessments by name, as MLflow's own client reads them (the valid
    ones: an overridden assessment stays, marked not valid)."""
    done = subprocess.run(
        [
            str(peer_bin("mlflow", "python")),
            str(ROOT / "tests" / "peers" / "mlflow_trace.py"),
            "assessments",
            mlflow_url,
            f"tr-{trace_id}",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if done.returncode != 0:  # the trace is not stored yet
        return {}
    found = json.loads(done.stdout.strip().splitlines()[-1])
    return {a["name"]: a for a in found if a["valid"] is not False}


def test_the_verdict_shows_on_the_judged_span_in_mlflow(
    store: Store, tmp_path: Path, mlflow_url: str
) -> None:
    experiment = _experiment(mlflow_url)
    with served_app(_settings(tmp_path, mlflow={"tracking_uri": mlflow_url}), store) as url:
        to_mlflow = OTLPSpanExporter(
            f"{mlflow_url}/v1/traces", headers={"x-mlflow-experiment-id": experiment}
        )
        trace_id, reply_span = _send_to_both(to_mlflow, url)
        turn = _judged(url, trace_id)
        wait_until(
            lambda: "factledger.verdict" in _assessments(mlflow_url, trace_id),
            120,
            "the verdict on the trace in MLflow",
        )
        found = _assessments(mlflow_url, trace_id)
        verdict = found["factledger.verdict"]
        assert verdict["span_id"] == reply_span
        assert verdict["value"] == "reject"
        assert verdict["source_type"] == "CODE"
        assert verdict["metadata"]["factledger.turn_id"] == turn["turn_id"]
        assert {f"factledger.{kind}" for kind in turn["kinds"]} <= set(found)

        _label(url, turn["turn_id"])
        wait_until(
            lambda: _assessments(mlflow_url, trace_id)["factledger.verdict"]["value"] == "pass",
            120,
            "the label to replace the verdict in MLflow",
        )
        relabelled = _assessments(mlflow_url, trace_id)["factledger.verdict"]
        assert relabelled["metadata"]["factledger.cause"] == "labelled"
