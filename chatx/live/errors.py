"""Error responses, in the shape of the API a request was made to.

The shapes (OpenAI's ``{"error": {"message", "type", "param", "code"}}``, Anthropic's
``{"type": "error", "error": {"type", "message"}}``, Llama Stack's ``{"error":
{"detail"}}``) and the headers sent with them live beside the APIs, in
:mod:`chatx.live.endpoints`. An SDK reads the message into the exception it raises and
picks the exception's class by the status, so a client under test sees what a provider's
error gives it.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

import orjson

from chatx.live.endpoints import error_headers, error_shape


class ApiError(Exception):
    """A request answered with an error body instead of a stream. ``kind``: the error
    type as recorded (a capture's), kept where the API answered uses it."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        param: str | None = None,
        code: str | None = None,
        kind: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param
        self.code = code
        self.kind = kind

    def body(self, api: str | None = None) -> bytes:
        """The body ``api`` (an ``--api`` name; OpenAI's shape without one) answers with."""
        shape = error_shape(api)
        said: dict[str, Any] = shape.body(
            self.message,
            shape.kind(self.status, self.kind),
            self.param,
            self.code or shape.codes.get(self.status),
        )
        return orjson.dumps(said)

    def headers(self) -> list[tuple[bytes, bytes]]:
        return error_headers(self.status)


def fault(status: int, api: str | None = None) -> ApiError:
    """``serve --status CODE``: the error a provider of ``api`` answers with that status."""
    message = error_shape(api).faults.get(status) or _phrase(status)
    return ApiError(status, f"{message} (chatx serve --status {status})")


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase + "."
    except ValueError:
        return f"HTTP {status}."
