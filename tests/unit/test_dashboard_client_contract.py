"""The dashboard's client types (dashboard/client.py) against the query API's response
models (collector/api/models.py): every key the dashboard reads from an endpoint is one
the API answers, with the same JSON type, all the way down.

Types are compared as JSON shapes: a datetime, an enum and a Literal of strings are
strings; a tuple of ints is an array of integers; a TypedDict or a model is a record of
its keys (the API's aliases, such as `class`). The API may answer more keys than the
dashboard reads.
"""

from __future__ import annotations

import datetime as dt
import enum
import types
import typing
from typing import Any, Literal, TypedDict, get_args, get_origin, get_type_hints

import pytest
from fastapi.routing import APIRoute
from pydantic import BaseModel, JsonValue

from factledger.collector.api.queries import router
from factledger.dashboard import client


class RejectRateAnswer(TypedDict):
    """`/stats/reject-rate` as the client reads it (`reject_rate` returns its series)."""

    series: list[client.Series]


ENDPOINTS: list[tuple[str, type]] = [
    ("/turns", client.TurnPage),
    ("/turns/{turn_id}", client.Turn),
    ("/stats/reject-rate", RejectRateAnswer),
    ("/review-queue", client.QueuePage),
    ("/verifications/summary", client.VerificationSummary),
    ("/stats/review-precision", client.ReviewPrecision),
    ("/stats/guard", client.GuardSummary),
]
"""Each GET endpoint the client types, and the type it reads the answer as."""

_SCALARS: dict[type, str] = {
    str: "string",
    bool: "boolean",
    int: "integer",
    float: "number",
    type(None): "null",
    dt.datetime: "string",
}


def shape(annotation: Any) -> Any:
    """The JSON shape of a type: a scalar's name, ("array", item), ("object", value),
    ("record", its (key, shape) pairs), a frozenset for a union, or "any"."""
    origin = get_origin(annotation)
    if annotation is Any or annotation is JsonValue:
        return "any"
    if origin is typing.Annotated:
        return shape(get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType, Literal):
        members: set[Any] = set()
        for arg in get_args(annotation):
            member = _SCALARS[type(arg)] if origin is Literal else shape(arg)
            members |= member if isinstance(member, frozenset) else {member}
        return next(iter(members)) if len(members) == 1 else frozenset(members)
    if origin in (list, tuple):
        items = {shape(arg) for arg in get_args(annotation) if arg is not Ellipsis}
        (item,) = items  # a tuple of mixed types would be no JSON array of one type
        return ("array", item)
    if origin is dict:
        return ("object", shape(get_args(annotation)[1]))
    if typing.is_typeddict(annotation):
        return _record({k: shape(v) for k, v in get_type_hints(annotation).items()})
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        fields = annotation.model_fields
        return _record({f.alias or k: shape(f.annotation) for k, f in fields.items()})
    if isinstance(annotation, type) and issubclass(annotation, enum.StrEnum):
        return "string"
    return _SCALARS[annotation]


def _record(keys: dict[str, Any]) -> tuple[str, frozenset[tuple[str, Any]]]:
    return ("record", frozenset(keys.items()))  # hashable, so it can sit in a union


def mismatches(where: str, read: Any, answered: Any) -> list[str]:
    """Where the shape the client reads differs from the one the API answers."""
    if isinstance(read, tuple) and isinstance(answered, tuple) and read[0] == answered[0]:
        if read[0] != "record":
            return mismatches(f"{where}[]", read[1], answered[1])
        found = []
        keys = dict(answered[1])
        for key, value in sorted(read[1]):
            if key not in keys:
                found.append(f"{where}.{key}: the API has no such key")
            else:
                found += mismatches(f"{where}.{key}", value, keys[key])
        return found
    return (
        []
        if read == answered
        else [f"{where}: the client reads {read}, the API answers {answered}"]
    )


def _response_model(path: str) -> type[BaseModel]:
    (model,) = [
        r.response_model
        for r in router.routes
        if isinstance(r, APIRoute) and r.path == path and "GET" in (r.methods or ())
    ]
    assert isinstance(model, type) and issubclass(model, BaseModel)
    return model


@pytest.mark.parametrize(("path", "read_as"), ENDPOINTS, ids=[p for p, _ in ENDPOINTS])
def test_the_dashboard_reads_what_the_api_answers(path: str, read_as: type) -> None:
    assert mismatches(path, shape(read_as), shape(_response_model(path))) == []


class _Misread(TypedDict):
    turns: list[client.TurnSummary]
    total: str
    pages: int


def test_a_misread_key_and_a_missing_one_are_both_reported() -> None:
    assert mismatches("/turns", shape(_Misread), shape(_response_model("/turns"))) == [
        "/turns.pages: the API has no such key",
        "/turns.total: the client reads string, the API answers integer",
    ]
