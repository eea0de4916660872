"""``chatx capture``: post a request with streaming on, and keep the answer as it came.

The body is written as it arrives, each read flushed, into ``OUT.part`` (created
exclusively: see :mod:`chatx.live.recorded_files`); renamed to ``OUT`` once the response has
ended as HTTP ends one, with the request beside it as ``OUT.request.json`` (no header,
no key). An HTTP error status, or a 2xx with an empty body, leaves no file at all;
Ctrl-C, SIGTERM, a read timeout or a dropped connection keep what arrived as ``OUT.part``
(its request as ``OUT.part.request.json``) and leave ``OUT`` as it was: a file named as a
capture is always a whole one. ``--tee FORMAT`` writes the stream to stdout as well,
converted live by a :class:`~chatx.Transcoder`.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from chatx.codecs.base import HttpApi
from chatx.drive import NoteReporter
from chatx.errors import ChatxError, ExitStatus
from chatx.live.endpoints import model_path
from chatx.live.recorded_files import Recording, request_path
from chatx.live.upstream import Upstream
from chatx.notes import Notes
from chatx.textsafe import escape_text

_ERROR_BODY_SHOWN = 64 << 10  # an error body longer than this is cut on stderr


@dataclass(slots=True)
class CaptureRequest:
    base_url: str
    endpoint: HttpApi
    body: dict[str, Any]
    out: Path
    key_env: str = "OPENAI_API_KEY"
    tee: str | None = None
    connect_timeout: float = 10.0
    read_timeout: float | None = 600.0
    quiet: bool = False
    # -H: (lowercase name, value) pairs sent after the defaults, so they override them
    # (a newer anthropic-version, a key in a header of the user's choosing)
    extra_headers: tuple[tuple[str, str], ...] = ()

    @property
    def upstream(self) -> Upstream:
        """The base URL taken apart: its credentials go as Basic auth, never in a URL
        that a message says."""
        return Upstream.parse(self.base_url, "--base-url")

    @property
    def url(self) -> str:
        endpoint = self.endpoint
        if "{model}" not in endpoint.path:
            return self.upstream.shown + endpoint.under_base
        # Gemini: the model and the streaming are in the path (the body's "model" says
        # which), the stream asked for as SSE
        return self.upstream.url_for(model_path(endpoint, self.model, stream=True))

    @property
    def model(self) -> str:
        model = self.body.get(self.endpoint.model_key)
        return model if isinstance(model, str) else ""

    def sent(self) -> dict[str, Any]:
        """The body posted: streaming on (``"stream": true``), or where the path says it
        and names the model (Gemini), the body without its ``model``."""
        if self.endpoint.stream_path:
            return {k: v for k, v in self.body.items() if k != self.endpoint.model_key}
        return {**self.body, "stream": True}


def _say(line: str) -> None:
    sys.stderr.write(f"chatx: {escape_text(line)}\n")
    sys.stderr.flush()


def headers(request: CaptureRequest) -> dict[str, str]:
    sent = {
        "content-type": "application/json",
        "accept": "text/event-stream",
        "accept-encoding": "identity",  # what is written is what the server sent
        **dict(request.endpoint.headers),
    }
    given = dict(request.extra_headers)
    key = os.environ.get(request.key_env)
    header = request.endpoint.key_header
    basic = request.upstream.authorization
    if key:
        sent[header] = f"Bearer {key}" if header == "authorization" else key
    if basic is not None:  # credentials written into --base-url are the ones asked for
        sent["authorization"] = basic
    elif not key and not request.quiet and header not in given:
        _say(f"warning: ${request.key_env} is not set: the request carries no API key")
    return {**sent, **given}


def parse_header(text: str) -> tuple[str, str]:
    """``Name: value`` as curl's -H takes it → (lowercase name, value); a ValueError
    saying what is wrong (the value is never repeated: it may be a key)."""
    name, colon, value = text.partition(":")
    name = name.strip()
    if not colon or not name or any(c in name for c in " \t\r\n"):
        raise ValueError(
            f"a header is 'Name: value' (got {name[:40]!r}{'' if colon else ', no colon'})"
        )
    if any(c in value for c in "\r\n"):
        raise ValueError(f"the value of header {name!r} has a line break")
    return name.lower(), value.strip()


def capture(request: CaptureRequest) -> int:
    import httpx2

    body = request.sent()
    url = request.url
    timeout = httpx2.Timeout(
        connect=request.connect_timeout,
        read=request.read_timeout,
        write=request.connect_timeout,
        pool=request.connect_timeout,
    )
    with httpx2.Client(timeout=timeout, follow_redirects=False) as client:
        try:
            sent = time.monotonic()  # the answer's head is recorded as this long after
            with client.stream(
                "POST", url, content=orjson.dumps(body), headers=headers(request)
            ) as response:
                if not 200 <= response.status_code < 300:
                    return _http_error(url, response)
                # the request kept beside the capture names its model, as the path did
                return _receive(request, {**request.body, **body}, response, sent)
        except httpx2.HTTPError as exc:  # before any byte of the body: nothing written
            _say(f"error: POST {url}: {request.upstream.redact(_describe(exc))}")
            return ExitStatus.ERROR


def _http_error(url: str, response: Any) -> int:
    body = response.read()
    text = body[:_ERROR_BODY_SHOWN].decode("utf-8", "replace")
    more = f" … ({len(body)} bytes)" if len(body) > _ERROR_BODY_SHOWN else ""
    _say(f"error: POST {url}: HTTP {response.status_code} {response.reason_phrase}")
    if text:  # indented under the line that says what it is
        lines = (text.rstrip("\n") + more).splitlines()
        sys.stderr.write("".join(f"  {escape_text(line)}\n" for line in lines))
    _say("error: nothing written")
    return ExitStatus.ERROR


def _receive(request: CaptureRequest, body: dict[str, Any], response: Any, sent: float) -> int:
    import httpx2

    recording = Recording(request.out, body, sent=sent)
    tee = Tee(request.tee, str(request.out), request.quiet) if request.tee else None
    try:
        for chunk in response.iter_bytes():
            recording.write(chunk)
            if tee is not None:
                tee.feed(chunk)
    except KeyboardInterrupt:  # Ctrl-C, and SIGTERM (raised as its subclass)
        kept = recording.close(whole=False)
        _say(f"capture incomplete (interrupted): {_kept(recording, kept, request.out)}")
        raise
    except httpx2.HTTPError as exc:
        kept = recording.close(whole=False)
        _say(f"error: POST {request.url}: {request.upstream.redact(_describe(exc))}")
        _say(f"capture incomplete: {_kept(recording, kept, request.out)}")
        return ExitStatus.ERROR
    if not recording.size:  # no stream at all: nothing to keep, and OUT is not emptied
        recording.discard()
        _say(
            f"error: the response (HTTP {response.status_code}) has an empty body, no stream: "
            f"nothing written, {request.out} left as it was"
        )
        return ExitStatus.ERROR
    kept = recording.close(whole=True)
    status = tee.finish() if tee is not None else ExitStatus.OK
    if not request.quiet:
        kind = response.headers.get("content-type", "no content type")
        _say(
            f"capture: {recording.size} bytes (HTTP {response.status_code}, {kind}) "
            f"into {kept}; the request in {request_path(kept)}"
        )
    return status


def _kept(recording: Recording, kept: Path, out: Path) -> str:
    return (
        f"{recording.size} bytes kept in {kept} (request in {request_path(kept)}); "
        f"{out} left as it was"
    )


def _describe(exc: Exception) -> str:
    import httpx2

    if isinstance(exc, httpx2.ConnectTimeout):
        return f"cannot connect: timed out ({exc})"
    if isinstance(exc, httpx2.ReadTimeout):
        return "read timed out: no bytes within --read-timeout"
    if isinstance(exc, httpx2.ConnectError):
        return f"cannot connect: {exc}"
    return f"{type(exc).__name__}: {exc}"


class Tee:
    """``--tee FORMAT``: the stream converted live to stdout. A stream it cannot convert
    stops the tee (said, exit 2 at the end), never the capture; nor does a reader of
    stdout that went away (``| head``)."""

    def __init__(self, fmt: str, name: str, quiet: bool) -> None:
        from chatx.pipeline import Transcoder

        self.notes = Notes()
        self.transcoder: Any = Transcoder(fmt, name=name, notes=self.notes)
        self.reporter = NoteReporter(self.notes, name, quiet)
        self.failed = False
        self.live = True

    def feed(self, chunk: bytes) -> None:
        if self.live:
            self._write(lambda: self.transcoder.feed(chunk))

    def finish(self) -> int:
        if self.live:
            self._write(self.transcoder.finish)
        if not self.failed:
            self.reporter.flush(final=True)
        return ExitStatus.ERROR if self.failed else ExitStatus.OK

    def _write(self, produce: Any) -> None:
        try:
            out = produce()
            self.reporter.flush()
            if out:
                sys.stdout.buffer.write(out)
                sys.stdout.flush()
        except ChatxError as exc:
            self.live, self.failed = False, True
            _say(f"error: --tee: {exc}; the capture goes on")
        except BrokenPipeError:
            self.live = False
            _silence_stdout()


def _silence_stdout() -> None:
    """The reader of stdout went away: what is left for it goes nowhere, quietly."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass
