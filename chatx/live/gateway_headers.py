"""What the gateway sends the upstream beside a body: the upstream API's own headers and
the API key in the upstream's header (``Authorization: Bearer`` or ``x-api-key``), taken
from the client's request in whichever of the two it came, or from
``--upstream-key-env``. Credentials written into ``--upstream`` go to it alone."""

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

    def translated(self, headers: list[tuple[bytes, bytes]], client: HttpApi) -> list[Any]:
        """What goes with a translated request: the upstream API's own headers and its key,
        the client's (or ``--upstream-key-env``'s) in the upstream's header."""
        sent = [(k.encode(), v.encode()) for k, v in self.api.headers]
        key = self.key if self.key is not None else client_key(headers, client)
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


def client_key(headers: list[tuple[bytes, bytes]], client: HttpApi) -> str | None:
    """The API key as the client sent it: in its API's header first (``Authorization:
    Bearer`` or ``x-api-key``), else in the other."""
    found = {name.lower(): raw.decode("latin-1") for name, raw in headers}
    for header in (client.key_header.encode(), b"authorization", b"x-api-key"):
        said = found.get(header)
        if said:
            if header == b"authorization":
                scheme, _, token = said.partition(" ")
                return token.strip() if scheme.lower() == "bearer" else None
            return said.strip()
    return None
