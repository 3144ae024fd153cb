"""Run in the MLflow virtualenv (.peers/mlflow): `trace URI` creates a trace with one LLM
span and prints its ids as JSON; `assessments URI TRACE_ID` prints that trace's
assessments, as MLflow's own client reads them, as JSON."""

import json
import os
import sys

# Synchronous logging: the trace must be in the server when this prints its ids.
os.environ["MLFLOW_ENABLE_ASYNC_TRACE_LOGGING"] = "false"

import mlflow
from mlflow import MlflowClient


def trace(uri: str) -> None:
    mlflow.set_tracking_uri(uri)
    mlflow.set_experiment("factledger-export")
    with mlflow.start_span(name="agent turn") as root:
        root.set_inputs({"question": "Where is order ORD-1?"})
        with mlflow.start_span(name="chat gpt-test", span_type="LLM") as llm:
            llm.set_outputs({"reply": "Order ORD-1 shipped."})
    info = MlflowClient(uri).get_trace(root.trace_id).info
    print(json.dumps({"trace_id": info.trace_id, "span_id": llm.span_id}))


def assessments(uri: str, trace_id: str) -> None:
    info = MlflowClient(uri).get_trace(trace_id).info
    found = [
        {
            "assessment_id": a.assessment_id,
            "name": a.name,
            "span_id": a.span_id,
            "value": a.value,
            "rationale": a.rationale,
            "metadata": a.metadata,
            "source_type": a.source.source_type,
            "source_id": a.source.source_id,
            "valid": a.valid,
            "overrides": a.overrides,
        }
        for a in info.assessments
    ]
    print(json.dumps(found))


if __name__ == "__main__":
    if sys.argv[1] == "trace":
        trace(sys.argv[2])
    else:
        assessments(sys.argv[2], sys.argv[3])
