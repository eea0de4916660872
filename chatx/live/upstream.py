"""Where ``proxy`` and ``capture`` send requests, and the only place they may.

An :class:`Upstream` is the base URL a user gave (``--upstream``, ``capture --base-url``),
taken apart once: scheme, host, port, base path and the credentials written into it. The
URL of every request is built from those parts, never by joining strings onto the text
the user gave: a request-target is only ever a path and a query under the base path, so
nothing a client sends (``@host``, ``//host``, ``http://host/``, ``%2F%2Fhost``, ``..``)
can change where the request goes.

Credentials in the URL (``http://user:pass@host``) are sent as HTTP Basic auth to that
host and no other, and are never said: :attr:`Upstream.shown` (what messages, logs and
error bodies name) leaves them out, and a URL that cannot be read is refused without
repeating it, since it may hold a password.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from urllib.parse import quote, unquote, urlsplit

from chatx.errors import UsageError

# The longest request-target the proxy sends on: longer ones are a 400. Servers commonly
# refuse 8 KiB request lines (nginx's default large_client_header_buffers is 8 KiB).
MAX_TARGET = 8192

# A path is percent-decoded this many times over, looking for what an escape may hide: a
# servlet container or a proxy behind the upstream may decode twice.
_DECODES = 3
# What no decoding of a path may give: a backslash (read as a slash by many servers) and
# control characters (a NUL, or a CR/LF that could split a header line further on).
_FORBIDDEN = re.compile(r"[\\\x00-\x1f\x7f]")
_QUERY_KEY = re.compile(r"([?&]key=)[^&#\s]+")


class Refused(ValueError):
    """A request-target the proxy will not send on; the message says why."""


@dataclass(frozen=True, slots=True)
class Upstream:
    scheme: str
    host: str  # as it goes in a URL: an IPv6 address in brackets
    port: int | None
    base: str  # the base path, without a trailing slash ("" for none)
    user: str | None = None
    password: str | None = None

    @classmethod
    def parse(cls, url: str, option: str) -> Upstream:
        """``url`` taken apart, or a UsageError naming ``option`` and what is wrong with
        it, never the URL itself (it may hold a password)."""
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as exc:
            raise UsageError(f"{option}: not a URL chatx can read ({_reason(exc)})") from None
        if parts.scheme not in ("http", "https"):
            raise UsageError(f"{option}: an http:// or https:// URL")
        if not parts.hostname:
            raise UsageError(f"{option}: the URL names no host")
        if parts.fragment or url.endswith("#"):
            raise UsageError(f"{option}: a base URL has no #fragment")
        if parts.query or url.endswith("?"):
            raise UsageError(f"{option}: a base URL has no ?query")
        if "@" in parts.path or any(c in url for c in " \t\r\n\\"):
            # An @ after the host is a password with an unescaped / or @ in it: which part
            # is the host cannot be told, so nothing is sent anywhere.
            raise UsageError(
                f"{option}: the URL cannot be read unambiguously "
                "(escape / @ : in a user name or password as %2F %40 %3A)"
            )
        host = parts.hostname
        host = f"[{host}]" if ":" in host else host
        user = unquote(parts.username) if parts.username is not None else None
        password = unquote(parts.password) if parts.password is not None else None
        return cls(parts.scheme, host, port, parts.path.rstrip("/"), user, password)

    @property
    def origin(self) -> str:
        """``scheme://host[:port]``, no credentials."""
        port = f":{self.port}" if self.port is not None else ""
        return f"{self.scheme}://{self.host}{port}"

    @property
    def shown(self) -> str:
        """The base URL as messages say it: without its credentials."""
        return self.origin + self.base

    @property
    def authorization(self) -> str | None:
        """The ``Authorization`` value the URL's credentials make, if it has any."""
        if self.user is None and self.password is None:
            return None
        pair = f"{self.user or ''}:{self.password or ''}".encode()
        return "Basic " + base64.b64encode(pair).decode("ascii")

    @property
    def described(self) -> str:
        """What a banner says: the URL shown, and whose credentials go with it."""
        who = f" (Basic auth as {self.user})" if self.authorization else ""
        return self.shown + who

    def redact(self, text: str) -> str:
        """``text`` with the credentials taken out, in every form a message could hold
        them (as given, percent-encoded, inside the Basic token)."""
        for secret in self._secrets():
            text = text.replace(secret, "***")
        return _QUERY_KEY.sub(r"\1***", text)  # a Gemini client's ?key=, in a URL said

    def _secrets(self) -> list[str]:
        found = [s for s in (self.password, self.authorization) if s]
        if self.authorization:
            found.append(self.authorization.split(" ", 1)[1])
        if self.password:
            found.append(quote(self.password, safe=""))
        return sorted(set(found), key=len, reverse=True)

    def url_for(self, path: str, query: str = "") -> str:
        """The URL of ``path`` (a path from ``/``, checked by :func:`check_target`) under
        the base: a base that ends in ``/v1`` takes a ``/v1/...`` path once, not twice."""
        base = self.base
        if base.endswith("/v1") and (path == "/v1" or path.startswith("/v1/")):
            base = base[: -len("/v1")]
        return self.origin + base + path + (f"?{query}" if query else "")


def check_target(raw_path: bytes, query: bytes) -> tuple[str, str]:
    """A request-target's path and query as they go upstream, or :class:`Refused`.

    Only the origin form is taken: a path from ``/``. The absolute form (``http://host/``),
    the authority form (``host:port``), ``*``, a network path (``//host``), a backslash,
    dot segments (``..`` would climb out of the base path), a fragment and escapes that
    hide any of those or a control character are refused, however often percent-encoded.
    """
    if len(raw_path) + len(query) > MAX_TARGET:
        raise Refused(f"the request-target is longer than {MAX_TARGET} bytes")
    if not raw_path.startswith(b"/"):
        raise Refused("the request-target is not a path from / (origin form)")
    if b"#" in raw_path or b"#" in query:
        raise Refused("a request-target has no #fragment")
    text = raw_path.decode("ascii", "replace")  # h11 takes visible ASCII only
    for decoded in _decodings(text):
        if decoded.startswith("//"):
            raise Refused("the path, decoded, names another host (//host)")
        if _FORBIDDEN.search(decoded):
            raise Refused(
                "the path holds, or an escape in it hides, a backslash or a control character"
            )
        if any(segment in (".", "..") for segment in decoded.split("/")):
            raise Refused("dot segments (. or ..) in the path")
    return text, query.decode("ascii", "replace")


def _decodings(text: str) -> list[str]:
    out = [text]
    for _ in range(_DECODES):
        text = unquote(text)
        if text == out[-1]:
            break
        out.append(text)
    return out


def _reason(exc: ValueError) -> str:
    """What urllib says is wrong, without the URL it may quote."""
    message = str(exc)
    return "port out of range" if "port" in message.lower() else "malformed"
