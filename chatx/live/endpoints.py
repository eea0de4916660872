"""The HTTP APIs chatx speaks: one line per API, for all three commands.

``serve`` answers each path with streams in its format, ``capture --api`` posts to it,
and ``proxy`` names recordings after it. A line whose format is not registered (a codec
not there yet) is left out, so adding a format's API is adding its line here.
"""

from __future__ import annotations

from dataclasses import dataclass

from chatx import codecs
from chatx.errors import UsageError


@dataclass(frozen=True, slots=True)
class Endpoint:
    api: str  # the name --api takes, and the one messages use
    path: str  # the route, /v1 included: a base URL ends in /v1, as OPENAI_BASE_URL does
    format: str  # the codec of the streams it sends
    model_key: str = "model"  # the request field naming the model
    key_header: str = "authorization"  # how capture sends the API key
    headers: tuple[tuple[str, str], ...] = ()  # sent by capture with every request

    @property
    def under_base(self) -> str:
        """The path after a base URL that ends in ``/v1``."""
        return self.path.removeprefix("/v1")


_ALL = (
    Endpoint("chat", "/v1/chat/completions", "chat-chunk"),
    Endpoint("responses", "/v1/responses", "responses-event"),
    Endpoint("llama-stack", "/v1/inference/chat-completion", "llama-stack-event", "model_id"),
    Endpoint(
        "anthropic",
        "/v1/messages",
        "anthropic-event",
        key_header="x-api-key",
        headers=(("anthropic-version", "2023-06-01"),),
    ),
)


def endpoints() -> tuple[Endpoint, ...]:
    """The APIs of the registered formats, in table order."""
    known = set(codecs.names())
    return tuple(endpoint for endpoint in _ALL if endpoint.format in known)


def by_path(path: str) -> Endpoint | None:
    for endpoint in endpoints():
        if endpoint.path == path:
            return endpoint
    return None


def by_name(name: str) -> Endpoint:
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
