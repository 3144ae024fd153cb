"""Text of request bodies, made storable and answerable where it is read.

JSON allows a lone surrogate escape (`\\ud800` with no pair); Python reads it into a str
that UTF-8 cannot encode. Pydantic then refuses the field, and the 422 that echoes the
input cannot be encoded either: a 500. A `StoredText` field holds U+FFFD in its place, as
every other edge of the service does (`json_text.replace_surrogates`), and
`validation_error` answers every other refused body with its echo made encodable.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BeforeValidator

from factledger.processors.normalize.json_text import replace_surrogates, without_surrogates


def _replaced(value: Any) -> Any:
    return replace_surrogates(value) if isinstance(value, str) else value


StoredText = Annotated[str, BeforeValidator(_replaced)]
"""A str with each lone surrogate replaced by U+FFFD (before pydantic's own checks)."""


async def validation_error(request: Request, exc: Exception) -> JSONResponse:
    """FastAPI's own 422 answer (`{"detail": [...]}`), with each lone surrogate in the
    echoed input replaced, so that a refusal is never a failure to answer."""
    errors = exc.errors() if isinstance(exc, RequestValidationError) else []
    return JSONResponse(
        status_code=422, content={"detail": without_surrogates(jsonable_encoder(errors))}
    )
