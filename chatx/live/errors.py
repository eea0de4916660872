"""Error bodies shaped as OpenAI's: ``{"error": {"message", "type", "param", "code"}}``.

The openai SDK reads ``message`` into the exception it raises and picks the exception's
class by the status, so a client under test sees what a provider's error gives it.
"""

from __future__ import annotations

from http import HTTPStatus

import orjson

# status -> (type, code), as OpenAI's API says them.
_KINDS: dict[int, tuple[str, str | None]] = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("permission_error", None),
    404: ("invalid_request_error", "not_found"),
    405: ("invalid_request_error", "method_not_allowed"),
    408: ("timeout_error", None),
    409: ("invalid_request_error", "conflict"),
    413: ("invalid_request_error", "request_too_large"),
    415: ("invalid_request_error", "unsupported_media_type"),
    422: ("invalid_request_error", None),
    429: ("requests", "rate_limit_exceeded"),
    500: ("server_error", None),
    502: ("server_error", "bad_gateway"),
    503: ("server_error", "overloaded"),
    504: ("server_error", "timeout"),
}

# What OpenAI says for the faults a client is tested against (--status).
_FAULT_MESSAGES = {
    401: "Incorrect API key provided.",
    403: "You are not allowed to make this request.",
    404: "The model does not exist or you do not have access to it.",
    429: "Rate limit reached for requests. Please try again in 1s.",
    500: "The server had an error while processing your request. Sorry about that!",
    503: "The engine is currently overloaded, please try again later.",
}


class ApiError(Exception):
    """A request answered with an error body instead of a stream."""

    def __init__(
        self, status: int, message: str, *, param: str | None = None, code: str | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param
        self.code = code

    def body(self) -> bytes:
        return error_body(self.status, self.message, param=self.param, code=self.code)


def error_body(
    status: int, message: str, *, param: str | None = None, code: str | None = None
) -> bytes:
    kind, default_code = _KINDS.get(status, _fallback(status))
    error = {"message": message, "type": kind, "param": param, "code": code or default_code}
    return orjson.dumps({"error": error})


def _fallback(status: int) -> tuple[str, str | None]:
    return ("server_error", None) if status >= 500 else ("invalid_request_error", None)


def fault(status: int) -> ApiError:
    """``serve --status CODE``: the error a provider answers with that status."""
    message = _FAULT_MESSAGES.get(status) or _phrase(status)
    return ApiError(status, f"{message} (chatx serve --status {status})")


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase + "."
    except ValueError:
        return f"HTTP {status}."
