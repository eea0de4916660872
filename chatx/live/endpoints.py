"""The HTTP APIs chatx speaks, read from the codec registry: one per format whose
descriptor names one (``Codec.http``, a :class:`~chatx.codecs.base.HttpApi`).

``serve`` answers each path with streams in its format, ``capture --api`` posts to it, and
``proxy`` names recordings after it. There is no table here: a format's API is its
package's business, and adding one is adding ``http=HttpApi(...)`` to its descriptor.
"""

from __future__ import annotations

from functools import cache

from chatx import codecs
from chatx.codecs.base import HttpApi
from chatx.errors import UsageError


def endpoints() -> tuple[HttpApi, ...]:
    """The APIs of the registered formats, in registry order, each with its format."""
    return _endpoints(codecs.CODECS)


@cache
def _endpoints(listed: tuple[codecs.Codec, ...]) -> tuple[HttpApi, ...]:
    return tuple(c.http._replace(format=c.name) for c in listed if c.http is not None)


def by_path(path: str) -> HttpApi | None:
    for endpoint in endpoints():
        if endpoint.path == path:
            return endpoint
    return None


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
