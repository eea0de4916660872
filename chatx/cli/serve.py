"""``chatx serve``: an OpenAI-compatible server that replays captures (chatx.live.app)."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NamedTuple

import typer

from chatx.cli.formats import HOST, ListenHost, ListenPort, QuietServer
from chatx.errors import UsageError
from chatx.textsafe import escape_text

if TYPE_CHECKING:
    from chatx.live.chaos import Chaos, Faults
    from chatx.live.upstream import Upstream

_SKIPPED_SHOWN = 5  # files a walk found that are no capture, said one by one


def serve(
    paths: Annotated[
        list[str],
        typer.Argument(
            help="Capture files or directories (walked for *.sse, *.jsonl, *.ndjson, *.json; "
            "NAME.request.json beside a capture is its recorded request).",
            show_default=False,
            metavar="PATH...",
        ),
    ],
    host: ListenHost = HOST,
    port: ListenPort = 8000,
    delay: Annotated[
        int, typer.Option("--delay", help="Wait MS milliseconds between events.", metavar="MS")
    ] = 0,
    cut_after: Annotated[
        int | None,
        typer.Option(
            "--cut-after", help="Drop the connection after N events of a stream.", metavar="N"
        ),
    ] = None,
    status: Annotated[
        int | None,
        typer.Option(
            "--status",
            help="Answer every API request with this HTTP error (400-599) and an "
            "error body in the shape of the API called.",
            metavar="CODE",
        ),
    ] = None,
    malformed_at: Annotated[
        int | None,
        typer.Option(
            "--malformed-at",
            help="Send event K of a stream with its JSON cut in half.",
            metavar="K",
        ),
    ] = None,
    error_at: Annotated[
        int | None,
        typer.Option(
            "--error-at",
            help="In place of event K, an error event in the shape of the API called, "
            "then the stream ends.",
            metavar="K",
        ),
    ] = None,
    stall: Annotated[
        float | None,
        typer.Option(
            "--stall",
            help="Wait SECONDS before event K of --stall-at (the first by default).",
            metavar="SECONDS",
        ),
    ] = None,
    stall_at: Annotated[
        int | None,
        typer.Option("--stall-at", help="The event --stall waits before.", metavar="K"),
    ] = None,
    chaos_rate: Annotated[
        float | None,
        typer.Option(
            "--chaos-rate",
            help="Put the faults given (or, with none, one drawn: an error status, a cut, "
            "a malformed event, an error event) into a share P of requests, drawn from "
            "--seed: runs repeat.",
            metavar="P",
        ),
    ] = None,
    seed: Annotated[
        int,
        typer.Option("--seed", help="Seed of --chaos-rate's draws.", metavar="N"),
    ] = 0,
    on_miss: Annotated[
        str | None,
        typer.Option(
            "--on-miss",
            help="A request no capture's recorded request matches: next (the next capture "
            "of its model, else in order; the default), error (a 400 naming the closest "
            "capture and the first difference) or upstream (forwarded to --upstream; "
            "the default with it).",
            metavar="next|error|upstream",
        ),
    ] = None,
    upstream: Annotated[
        str | None,
        typer.Option(
            "--upstream",
            help="Forward a miss to this provider's base URL, as chatx proxy does, and "
            "record the answer (see --record-mode).",
            metavar="URL",
        ),
    ] = None,
    record_mode: Annotated[
        str | None,
        typer.Option(
            "--record-mode",
            help="With --upstream: new (record each miss into the first PATH, a directory; "
            "the default), all (forward and record every request) or none (forward "
            "misses, record nothing).",
            metavar="none|new|all",
        ),
    ] = None,
    timing: Annotated[
        str,
        typer.Option(
            "--timing",
            help="recorded: send the response head after the time the recorded one took, "
            "and each event when it arrived as recorded (NAME.timing beside the capture, "
            "written by capture and proxy); a whole answer after the whole time; none: as "
            "fast as the client reads.",
            metavar="recorded|none",
        ),
    ] = "none",
    speed: Annotated[
        float,
        typer.Option(
            "--speed",
            help="With --timing recorded: play the recorded times X times as fast.",
            metavar="X",
        ),
    ] = 1.0,
    quiet: QuietServer = False,
) -> int:
    from chatx.live import served_captures, server
    from chatx.live.app import ServeApp
    from chatx.live.chaos import Faults
    from chatx.live.endpoints import endpoints
    from chatx.live.timing import MODES

    server.require("serve", "uvicorn", "anyio", *(("httpx2",) if upstream else ()))
    if delay < 0:
        raise UsageError("--delay: milliseconds, 0 or more")
    if cut_after is not None and cut_after < 0:
        raise UsageError("--cut-after: a number of events, 0 or more")
    if status is not None and not 400 <= status <= 599:
        raise UsageError(f"--status: an HTTP error status, 400 to 599 (not {status})")
    if not 0 <= port <= 65535:
        raise UsageError(f"--port: 0 to 65535 (not {port})")
    if timing not in MODES:
        raise UsageError(f"--timing: recorded or none (not {timing!r})")
    if not speed > 0 or speed == float("inf"):
        raise UsageError(f"--speed: a number above 0 (not {speed:g})")
    chaos = _chaos(
        Faults(cut_after, status, malformed_at, error_at, stall_at, stall or 0.0),
        chaos_rate,
        seed,
    )
    recording = _recording(paths, upstream, on_miss, record_mode)
    skipped: list[str] = []
    try:
        loaded = served_captures.load(paths, skipped, none_is_fine=recording.upstream is not None)
    finally:  # said also when no capture is left
        for line in skipped[:_SKIPPED_SHOWN]:
            sys.stderr.write(f"chatx: warning: {escape_text(line)}\n")
        if len(skipped) > _SKIPPED_SHOWN:
            more = len(skipped) - _SKIPPED_SHOWN
            sys.stderr.write(f"chatx: warning: {more} more files that are no capture skipped\n")
    sock = server.bind(host, port)
    app = ServeApp(
        loaded,
        delay=delay / 1000,
        chaos=chaos,
        on_miss=recording.on_miss,
        log=None if quiet else _say,
        upstream=recording.upstream,
        record=recording.folder,
        record_mode=recording.mode,
        timing=timing,
        speed=speed,
    )
    app.debug = server.debugging()
    where = server.url(sock)
    routes = ", ".join(e.path for e in endpoints())
    banner = f"{len(loaded)} captures on {where}/v1 ({routes}, GET /v1/models)"
    if recording.upstream is not None:
        banner += f"; misses -> {recording.upstream.described}"
        if recording.folder is not None:
            banner += f", recorded into {recording.folder}"
    banner += "; Ctrl-C to stop"
    lifespan: server.Lifespan = "on" if recording.upstream is not None else "off"
    server.run(app, sock, "serve", lifespan=lifespan, ready=lambda: _say(banner))
    return 0


def _chaos(faults: Faults, rate: float | None, seed: int) -> Chaos:
    """The faults checked: each place an event number from 1, a stall 0 s or more."""
    from chatx.live.chaos import Chaos

    for option, at in (
        ("--malformed-at", faults.malformed_at),
        ("--error-at", faults.error_at),
        ("--stall-at", faults.stall_at),
    ):
        if at is not None and at < 1:
            raise UsageError(f"{option}: an event's number, from 1 (not {at})")
    if faults.stall < 0 or faults.stall != faults.stall or faults.stall == float("inf"):
        raise UsageError(f"--stall: seconds, 0 or more (not {faults.stall:g})")
    if faults.stall and faults.stall_at is None:
        faults = replace(faults, stall_at=1)
    elif faults.stall_at is not None and not faults.stall:
        raise UsageError("--stall-at K names the event --stall SECONDS waits before: give --stall")
    if rate is not None and not 0 <= rate <= 1:
        raise UsageError(f"--chaos-rate: a share of requests, 0 to 1 (not {rate:g})")
    return Chaos(faults, rate, seed)


class _Recording(NamedTuple):
    on_miss: str
    upstream: Upstream | None
    folder: Path | None
    mode: str


def _recording(
    paths: list[str], upstream: str | None, on_miss: str | None, mode: str | None
) -> _Recording:
    """What a miss does: --on-miss, --upstream and --record-mode checked together, the
    folder recorded into made (the first PATH)."""
    from chatx.live.app import RECORD_MODES
    from chatx.live.choose import ON_MISS
    from chatx.live.upstream import Upstream

    if on_miss is not None and on_miss not in ON_MISS:
        raise UsageError(f"--on-miss: next, error or upstream (not {on_miss!r})")
    if mode is not None and mode not in RECORD_MODES:
        raise UsageError(f"--record-mode: none, new or all (not {mode!r})")
    if upstream is None:
        if on_miss == "upstream" or mode not in (None, "none"):
            said = "--on-miss upstream" if on_miss == "upstream" else f"--record-mode {mode}"
            raise UsageError(f"{said} forwards to an upstream: give --upstream URL")
        return _Recording(on_miss or "next", None, None, "none")
    if on_miss not in (None, "upstream"):
        raise UsageError(
            f"--upstream answers what misses: --on-miss upstream (the default with it), "
            f"not {on_miss}"
        )
    target = Upstream.parse(upstream, "--upstream")  # before anything is created
    mode = mode or "new"
    if mode == "none":
        return _Recording("upstream", target, None, mode)
    folder = Path(paths[0])
    if folder.exists() and not folder.is_dir():
        raise UsageError(
            f"--record-mode {mode} records into the first PATH, a directory: {paths[0]} is not one"
        )
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{paths[0]}: cannot create it: {exc.strerror or exc}") from None
    return _Recording("upstream", target, folder, mode)


def _say(line: str) -> None:
    sys.stderr.write(f"chatx: serve: {escape_text(line)}\n")
    sys.stderr.flush()
