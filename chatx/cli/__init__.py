"""The command line: a thin Typer layer over the library.

Every command ends in :func:`main`, the one place errors become messages and exit codes
(as httpie's ``raw_main``): no traceback unless ``--traceback`` or ``CHATX_DEBUG=1``.
"""

from __future__ import annotations

import gc
import os
import signal
import sys

import typer

from chatx.errors import ChatxError, ExitStatus
from chatx.textsafe import escape_text

app = typer.Typer(
    name="chatx",
    help="A stream transcoder for LLM streaming output: chat-chunk, responses-event, "
    "llama-stack-event.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _register() -> None:
    from chatx.cli import convert, formats

    convert.register(app)
    formats.register(app)
    for module in ("validate", "rules", "diff", "show", "collect"):
        try:
            imported = __import__(f"chatx.cli.{module}", fromlist=["register"])
        except ImportError:
            continue
        imported.register(app)


def error(message: str) -> None:
    """Say an error on stderr, escaped: it may quote text from a stream."""
    sys.stderr.write(f"chatx: error: {escape_text(message)}\n")


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return (and exit with) the process exit code."""
    args = sys.argv[1:] if argv is None else argv
    debug = "--traceback" in args or os.environ.get("CHATX_DEBUG") == "1"
    args = [a for a in args if a != "--traceback"]
    # SIGTERM ends the run like Ctrl-C: output written so far stays complete.
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    _register()
    # Streams make millions of short-lived, acyclic dicts: reference counting frees them,
    # and the cyclic collector's full passes over them cost a third of a conversion.
    gc.freeze()
    gc.set_threshold(100_000, 50, 1000)
    try:
        status = app(args=args, prog_name="chatx", standalone_mode=False)
        code = int(status or 0)
    except ChatxError as exc:
        if debug:
            raise
        error(str(exc))
        code = int(exc.exit_status)
    except typer.Exit as exc:
        code = getattr(exc, "exit_code", 0)
    except typer.Abort:
        code = ExitStatus.INTERRUPTED
    except typer.TyperException as exc:  # usage errors: unknown option, missing value…
        if debug:
            raise
        show = getattr(exc, "show", None)
        if show is not None:
            show()
        else:
            error(str(exc))
        code = ExitStatus.ERROR
    except BrokenPipeError:
        code = _quiet_pipe()
    except KeyboardInterrupt:
        if debug:
            raise
        code = ExitStatus.INTERRUPTED
    except OSError as exc:
        if debug:
            raise
        error(f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": "))
        code = ExitStatus.ERROR
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        code = _quiet_pipe()
    except ValueError:  # stdout already closed
        pass
    return code


def _quiet_pipe() -> int:
    """The reader went away (``| head``): stop quietly, as cat does."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass
    return ExitStatus.OK


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())
