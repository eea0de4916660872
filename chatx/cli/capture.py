"""``chatx capture``: post a request to a provider with streaming on and keep the
stream as it came (chatx.live.posting)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from chatx.cli.formats import format_choice
from chatx.errors import UsageError


def capture(
    base_url: Annotated[
        str,
        typer.Option(
            "--base-url",
            help="The API's base URL, ending in /v1 as OPENAI_BASE_URL does "
            "(https://api.openai.com/v1, http://localhost:8321/v1 for Llama Stack).",
            metavar="URL",
        ),
    ],
    output: Annotated[
        Path,
        typer.Option(
            "-o",
            "--output",
            help="The capture file. Written as it arrives into OUT.part, renamed to OUT when "
            "the response ends; an interrupted capture stays OUT.part.",
            metavar="OUT",
        ),
    ],
    api: Annotated[
        str,
        typer.Option(
            "--api",
            help="chat (/chat/completions), responses (/responses), llama-stack "
            "(/inference/chat-completion), anthropic (/messages) or gemini "
            '(/v1beta/models/MODEL:streamGenerateContent?alt=sse, MODEL the body\'s "model", '
            "the base URL without /v1); a format name works too.",
        ),
    ] = "chat",
    request_file: Annotated[
        str | None,
        typer.Option(
            "--request", help="The request body, a JSON file (- for stdin).", metavar="FILE"
        ),
    ] = None,
    data: Annotated[
        str | None,
        typer.Option("-d", "--data", help="The request body as JSON text.", metavar="JSON"),
    ] = None,
    api_key_env: Annotated[
        str,
        typer.Option(
            "--api-key-env", help="The environment variable holding the API key.", metavar="NAME"
        ),
    ] = "OPENAI_API_KEY",
    tee: Annotated[
        str | None,
        format_choice(
            "--tee",
            help="Also write the stream to stdout, converted live to FORMAT.",
            metavar="FORMAT",
        ),
    ] = None,
    connect_timeout: Annotated[
        float, typer.Option("--connect-timeout", help="Seconds to connect.", metavar="S")
    ] = 10.0,
    read_timeout: Annotated[
        float,
        typer.Option(
            "--read-timeout",
            help="Seconds to wait for the next bytes of the answer (0: no limit).",
            metavar="S",
        ),
    ] = 600.0,
    header: Annotated[
        list[str] | None,
        typer.Option(
            "-H",
            "--header",
            help="A request header, 'Name: value' as curl takes it (repeatable); it replaces "
            "chatx's own (the key header, anthropic-version). Never written to a file.",
            metavar="HEADER",
        ),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Say only errors.")] = False,
) -> int:
    from chatx.live import posting, server
    from chatx.live.endpoints import by_name
    from chatx.live.upstream import Upstream

    server.require("capture", "httpx2")
    endpoint = by_name(api)
    Upstream.parse(base_url, "--base-url")  # refused before anything is sent or written
    if connect_timeout <= 0 or read_timeout < 0:
        raise UsageError("--connect-timeout is more than 0 seconds, --read-timeout 0 or more")
    try:
        extra_headers = tuple(posting.parse_header(text) for text in header or ())
    except ValueError as exc:
        raise UsageError(f"-H: {exc}") from None
    body = _body(request_file, data)
    if "{model}" in endpoint.path and not isinstance(body.get(endpoint.model_key), str):
        raise UsageError(
            f'--api {endpoint.api}: the path names the model; give it as "model" in the body'
        )
    output = _check_output(output)
    return posting.capture(
        posting.CaptureRequest(
            base_url=base_url,
            endpoint=endpoint,
            body=body,
            out=output,
            key_env=api_key_env,
            tee=tee,
            connect_timeout=connect_timeout,
            read_timeout=read_timeout or None,
            quiet=quiet,
            extra_headers=extra_headers,
        )
    )


def _body(request_file: str | None, data: str | None) -> dict:
    import orjson

    from chatx.containers.payload import request_json

    if (request_file is None) == (data is None):
        raise UsageError("give the request body: --request FILE or -d JSON (one of them)")
    if request_file is not None:
        where = f"--request {request_file}"
        try:
            text = (
                sys.stdin.buffer.read() if request_file == "-" else Path(request_file).read_bytes()
            )
        except OSError as exc:
            raise UsageError(f"{where}: cannot read: {exc.strerror or exc}") from None
    else:
        where, text = "-d", (data or "").encode()
    try:
        body = request_json(text)  # nested past MAX_DEPTH: refused, as invalid JSON is
    except orjson.JSONDecodeError as exc:
        raise UsageError(f"{where}: invalid JSON: {exc}") from None
    if not isinstance(body, dict):
        raise UsageError(f"{where}: the request body is a JSON object")
    return body


def _check_output(output: Path) -> Path:
    """The file the capture goes to (OUT, or what your own symlink at OUT names), refused
    before the request is sent when it cannot be: a capture is not paid for twice."""
    import contextlib
    import os
    import stat

    from chatx import atomic
    from chatx.live.recorded_files import in_the_way, part_path, request_path

    if str(output) == "-":
        raise UsageError("-o: capture writes a file (--tee FORMAT writes stdout as well)")
    try:
        target = Path(atomic.own_target(str(output)))
    except atomic.PlacementError as exc:
        raise UsageError(f"-o {exc}") from None
    if target.is_dir():
        raise UsageError(f"-o {output}: a directory")
    with contextlib.suppress(OSError):  # nothing there: a new file
        info = os.stat(target)
        if not stat.S_ISREG(info.st_mode):  # /dev/null would be renamed over, a FIFO lost
            raise UsageError(f"-o {output}: {atomic.what_is(info)} is there, not a file")
    parent = target.parent
    if not parent.is_dir():
        raise UsageError(f"-o {output}: no directory {parent}")
    if not os.access(parent, os.W_OK):
        raise UsageError(f"-o {output}: cannot write into {parent}")
    if os.path.isdir(request_path(target)) and not os.path.islink(request_path(target)):
        # the request would be renamed onto it only once the capture is paid for
        raise UsageError(f"-o {output}: a directory is at {request_path(target)}")
    part = part_path(target)
    what = in_the_way(part)
    if what is not None:
        raise UsageError(
            f"-o {output}: {what} is at {part}, where a capture writes what arrives: "
            "remove it or choose another -o"
        )
    return target
