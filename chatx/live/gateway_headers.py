"""What the gateway sends the upstream beside a body: the upstream API's own headers and
the API key in the upstream's header (``Authorization: Bearer``, ``x-api-key`` or
``x-goog-api-key``), taken from the client's request in whichever it came (or a Gemini
client's ``?key=``), or from ``--upstream-key-env``. Credentials written into ``--upstream`` go to it alone."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chatx.codecs.base import HttpApi
    from chatx.live.upstream import Upstream


class UpstreamHeaders:
    """The headers of a request to ``upstream``, which speaks ``api``; ``key`` (from
    ``--upstream-key-env``) replaces the client's."""

    def __init__(self, upstream: Upstream, api: HttpApi, key: str | None = None) -> None:
        self.upstream = upstream
        self.api = api
        self.key = key

    def translated(
        self, headers: list[tuple[bytes, bytes]], client: HttpApi, query: bytes = b""
    ) -> list[Any]:
        """What goes with a translated request: the upstream API's own headers and its key,
        the client's (or ``--upstream-key-env``'s) in the upstream's header."""
        sent = [(k.encode(), v.encode()) for k, v in self.api.headers]
        key = self.key if self.key is not None else client_key(headers, client, query)
        basic = self.upstream.authorization
        if basic is not None:  # the credentials written into --upstream, to it alone
            sent.append((b"authorization", basic.encode("latin-1")))
        elif key:
            value = f"Bearer {key}" if self.api.key_header == "authorization" else key
            sent.append((self.api.key_header.encode(), value.encode("latin-1", "replace")))
        return sent

    def same_api(self, headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
        """A request in the upstream's own API keeps its headers, but for the key
        ``--upstream-key-env`` replaces."""
        if self.key is None:
            return headers
        header = self.api.key_header.encode()
        value = f"Bearer {self.key}" if header == b"authorization" else self.key
        kept = [(k, v) for k, v in headers if k.lower() != header]
        return [*kept, (header, value.encode("latin-1", "replace"))]


_KEY_HEADERS = (b"authorization", b"x-api-key", b"x-goog-api-key")


def client_key(
    headers: list[tuple[bytes, bytes]], client: HttpApi, query: bytes = b""
) -> str | None:
    """The API key as the client sent it: in its API's header first (``Authorization:
    Bearer``, ``x-api-key``, ``x-goog-api-key``), else in another of those, else in the
    query's ``key=`` (Google's APIs take it there too)."""
    found = {name.lower(): raw.decode("latin-1") for name, raw in headers}
    for header in (client.key_header.encode(), *_KEY_HEADERS):
        said = found.get(header)
        if said:
            if header == b"authorization":
                scheme, _, token = said.partition(" ")
                return token.strip() if scheme.lower() == "bearer" else None
            return said.strip()
    return query_key(query)


def query_key(query: bytes) -> str | None:
    """The ``key=`` of a query string, if any."""
    if b"key=" not in query:
        return None
    from urllib.parse import parse_qs

    keys = parse_qs(query.decode("latin-1")).get("key")
    return keys[0] if keys else None


def client_secrets(headers: list[tuple[bytes, bytes]], query: bytes) -> tuple[str, ...]:
    """Every key the client sent, in a header or the query: what no answer, log or file
    the gateway writes may hold, however an upstream echoes it."""
    found = {name.lower(): raw.decode("latin-1") for name, raw in headers}
    said = [found.get(h, "").removeprefix("Bearer ").strip() for h in _KEY_HEADERS]
    said.append(query_key(query) or "")
    return tuple(s for s in dict.fromkeys(said) if len(s) >= 8)
