"""The HTTP APIs chatx speaks, read from the codec registry: one per format whose
descriptor names one (``Codec.http``, a :class:`~chatx.codecs.base.HttpApi`).

``serve`` answers each path with streams in its format, ``capture --api`` posts to it, and
``proxy`` names recordings after it. There is no table here: a format's API is its
package's business, and adding one is adding ``http=HttpApi(...)`` to its descriptor.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any, NamedTuple
from urllib.parse import parse_qs, quote

import orjson

from chatx import codecs
from chatx.codecs.base import HttpApi, route_pattern
from chatx.errors import UsageError


def endpoints() -> tuple[HttpApi, ...]:
    """The APIs of the registered formats, in registry order, each with its format."""
    return _endpoints(codecs.CODECS)


@cache
def _endpoints(listed: tuple[codecs.Codec, ...]) -> tuple[HttpApi, ...]:
    return tuple(c.http._replace(format=c.name) for c in listed if c.http is not None)


class Route(NamedTuple):
    """What a request's path asks for: the API, the model when the path names it, and
    whether it streams when the path says (None: the request body's ``stream`` says)."""

    endpoint: HttpApi
    model: str | None = None
    stream: bool | None = None


def route(path: str) -> Route | None:
    """The route ``path`` is of one of the APIs, or None."""
    for endpoint in endpoints():
        ways = [(endpoint.path, False if endpoint.stream_path else None)]
        if endpoint.stream_path:
            ways.append((endpoint.stream_path, True))
        for first in endpoint.also:  # the same routes under another version
            ways += [(first + "/" + t.split("/", 2)[2], stream) for t, stream in ways[:2]]
        for template, stream in ways:
            if "{" not in template:
                if template == path:
                    return Route(endpoint, None, stream)
                continue
            match = route_pattern(template).match(path)
            if match is not None:
                return Route(endpoint, match.group("model"), stream)
    return None


def model_path(endpoint: HttpApi, model: str, stream: bool) -> str:
    """The path (and query) of a request to ``endpoint`` for ``model``, where the route
    names the model (Gemini's ``/v1beta/models/{model}:streamGenerateContent?alt=sse``).
    The model is one path segment, percent-encoded whole (a ``/``, ``?``, ``#`` or ``%``
    in it cannot reach another path, query or host; a leading ``models/``, as Google's
    resource names begin, is the route's own)."""
    template = endpoint.stream_path if stream and endpoint.stream_path else endpoint.path
    name = quote(model.removeprefix("models/"), safe="")
    if not name:
        raise ValueError("no model: the path names one")
    if name in (".", ".."):  # a dot segment, which a server would climb out of
        name = name.replace(".", "%2E")
    path = template.replace("{model}", name)
    if stream and endpoint.stream_path and endpoint.sse_query:
        path += "?" + endpoint.sse_query
    return path


def sse_asked(endpoint: HttpApi, query: bytes | str) -> bool:
    """Whether a stream request's query asks for SSE: always, but where the API answers
    one JSON array without its ``sse_query`` (Gemini without ``alt=sse``)."""
    if not endpoint.sse_query:
        return True
    text = query.decode("latin-1") if isinstance(query, bytes) else query
    name, _, value = endpoint.sse_query.partition("=")
    return value in parse_qs(text).get(name, [])


def by_path(path: str) -> HttpApi | None:
    found = route(path)
    return found.endpoint if found is not None else None


def by_name(name: str) -> HttpApi:
    """``--api``: an API's name, or any name of its format (``chat-chunk``, ``responses``)."""
    for endpoint in endpoints():
        if name == endpoint.api:
            return endpoint
    try:
        fmt = codecs.get(name).name
    except UsageError:
        fmt = None
    for endpoint in endpoints():
        if endpoint.format == fmt:
            return endpoint
    known = ", ".join(endpoint.api for endpoint in endpoints())
    raise UsageError(f"--api: unknown API {name!r} (known: {known})")


# How each API says an error, by its --api name: the body and the headers a provider's
# error response carries. One table, beside the APIs it speaks for, so it moves with them.


class ErrorShape(NamedTuple):
    """An API's error response: ``kinds`` maps a status to the error type the API names
    (its fallback for other statuses under ``0`` and ``500``), ``faults`` what the API
    says for the statuses ``serve --status`` answers, ``body`` builds the JSON body."""

    kinds: dict[int, str]
    faults: dict[int, str]
    body: Callable[[str, str, str | None, str | None], dict[str, Any]]
    codes: dict[int, str] = {}  # noqa: RUF012 -- a NamedTuple default, never changed

    def kind(self, status: int, recorded: str | None = None) -> str:
        """The error type for a status; a recorded type the API itself uses is kept."""
        if recorded is not None and recorded in self.kinds.values():
            return recorded
        if status in self.kinds:
            return self.kinds[status]
        return self.kinds[500] if status >= 500 else self.kinds[0]


def _openai_body(message: str, kind: str, param: str | None, code: str | None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def _anthropic_body(message: str, kind: str, param: str | None, code: str | None) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def _llama_stack_body(
    message: str, kind: str, param: str | None, code: str | None
) -> dict[str, Any]:
    # Llama Stack's server answers every error as {"error": {"detail": ...}}.
    return {"error": {"detail": message}}


OPENAI_ERRORS = ErrorShape(
    kinds={
        0: "invalid_request_error",
        400: "invalid_request_error",
        401: "invalid_request_error",
        403: "permission_error",
        404: "invalid_request_error",
        405: "invalid_request_error",
        408: "timeout_error",
        409: "invalid_request_error",
        413: "invalid_request_error",
        415: "invalid_request_error",
        422: "invalid_request_error",
        429: "requests",
        500: "server_error",
        502: "server_error",
        503: "server_error",
        504: "server_error",
    },
    faults={
        401: "Incorrect API key provided.",
        403: "You are not allowed to make this request.",
        404: "The model does not exist or you do not have access to it.",
        429: "Rate limit reached for requests. Please try again in 1s.",
        500: "The server had an error while processing your request. Sorry about that!",
        503: "The engine is currently overloaded, please try again later.",
    },
    body=_openai_body,
    codes={
        401: "invalid_api_key",
        404: "not_found",
        405: "method_not_allowed",
        409: "conflict",
        413: "request_too_large",
        415: "unsupported_media_type",
        429: "rate_limit_exceeded",
        502: "bad_gateway",
        503: "overloaded",
        504: "timeout",
    },
)

ANTHROPIC_ERRORS = ErrorShape(
    kinds={
        0: "invalid_request_error",
        400: "invalid_request_error",
        401: "authentication_error",
        402: "billing_error",
        403: "permission_error",
        404: "not_found_error",
        413: "request_too_large",
        429: "rate_limit_error",
        500: "api_error",
        504: "timeout_error",
        529: "overloaded_error",
    },
    faults={
        401: "invalid x-api-key",
        403: "Your API key does not have permission to use the specified resource.",
        404: "The requested resource could not be found.",
        429: "Number of requests has exceeded your rate limit.",
        500: "Internal server error",
        529: "Overloaded",
    },
    body=_anthropic_body,
)

LLAMA_STACK_ERRORS = ErrorShape(
    kinds={0: "invalid_request_error", 500: "server_error"},
    faults={},
    body=_llama_stack_body,
)


def _google_body(message: str, kind: str, param: str | None, code: str | None) -> dict[str, Any]:
    # Google's APIs: the HTTP status as code, the gRPC status word beside it. ``code`` is
    # the status itself when chatx answers (GOOGLE_ERRORS.codes), else the word's status.
    status = next((s for s, word in GOOGLE_ERRORS.kinds.items() if word == kind and s), 400)
    if code is not None and code.isdigit():
        status = int(code)
    return {"error": {"code": status, "message": message, "status": kind}}


GOOGLE_ERRORS = ErrorShape(
    kinds={
        0: "INVALID_ARGUMENT",
        400: "INVALID_ARGUMENT",
        401: "UNAUTHENTICATED",
        403: "PERMISSION_DENIED",
        404: "NOT_FOUND",
        405: "UNIMPLEMENTED",
        429: "RESOURCE_EXHAUSTED",
        500: "INTERNAL",
        503: "UNAVAILABLE",
        504: "DEADLINE_EXCEEDED",
    },
    faults={
        401: "API key not valid. Please pass a valid API key.",
        403: "The caller does not have permission",
        404: "The requested model was not found.",
        429: "Resource has been exhausted (e.g. check quota).",
        500: "An internal error has occurred.",
        503: "The model is overloaded. Please try again later.",
    },
    body=_google_body,
    # the HTTP status said as the body's code (a 502 says 502, with INTERNAL)
    codes={s: str(s) for s in (400, 401, 403, 404, 405, 408, 409, 413, 429, 500, 502, 503, 504)},
)

ERROR_SHAPES: dict[str, ErrorShape] = {
    "chat": OPENAI_ERRORS,
    "responses": OPENAI_ERRORS,
    "anthropic": ANTHROPIC_ERRORS,
    "llama-stack": LLAMA_STACK_ERRORS,
    "gemini": GOOGLE_ERRORS,
}


def error_shape(api: str | None) -> ErrorShape:
    """The error shape of an API by its name; OpenAI's for a path no API answers (and an
    API registered without one), the shape most clients read."""
    return ERROR_SHAPES.get(api or "", OPENAI_ERRORS)


def error_headers(status: int) -> list[tuple[bytes, bytes]]:
    """What a provider sends with the statuses a client retries on: ``retry-after`` with
    a 429 (seconds; both SDKs wait that long), ``x-should-retry: true`` with a 503 or 529
    (overloaded), the header the openai and anthropic SDKs read first."""
    if status == 429:
        return [(b"retry-after", b"1"), (b"x-should-retry", b"true")]
    if status in (503, 529):
        return [(b"x-should-retry", b"true")]
    return []


# How each API says an error in the middle of a stream: an SSE event in the shape its
# SDKs raise on. Chat and Llama Stack put the error body on a data line (the openai SDK
# raises APIError on a chunk with "error"); Responses sends an error event; Anthropic an
# event named error with its error body (its SDK raises the error's type).


def stream_error(api: str | None, message: str) -> bytes:
    if api == "responses":
        said = {"type": "error", "code": "server_error", "message": message, "param": None}
        return b"event: error\ndata: " + orjson.dumps(said) + b"\n\n"
    shape = error_shape(api)
    status = 529 if api == "anthropic" else 500
    body = shape.body(message, shape.kind(status), None, shape.codes.get(status))
    if api == "anthropic":
        return b"event: error\ndata: " + orjson.dumps(body) + b"\n\n"
    return b"data: " + orjson.dumps(body) + b"\n\n"
