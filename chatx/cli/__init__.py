"""The command line: a thin Typer layer over the library.

Every command ends in :func:`main`, the one place errors become messages and exit codes
(as httpie's ``raw_main``): no traceback unless ``--traceback`` or ``CHATX_DEBUG=1``.
Click's own top-level handling is bypassed (the command is invoked directly), since it
turns a broken pipe into exit 1 and Ctrl-C into a blank line on stderr.
"""

from __future__ import annotations

import contextlib
import gc
import io
import os
import signal
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from importlib import import_module
from typing import TYPE_CHECKING, Any

from chatx.cli import streams
from chatx.cli.streams import error
from chatx.errors import ChatxError, ExitStatus

if TYPE_CHECKING:
    import typer

_SETTINGS: dict[str, Any] = {
    "name": "chatx",
    "help": "A stream transcoder for LLM streaming output (chatx formats lists the formats).",
    "no_args_is_help": True,
    "add_completion": False,
    "pretty_exceptions_enable": False,
    "rich_markup_mode": None,
}

# The commands whose usual command lines are read without typer and click (their
# module's ``quick``): typer and click are imported when a command line needs them.
_QUICK = ("convert",)


def __getattr__(name: str) -> Any:
    """``app``, the typer app of every command, made when first asked for."""
    if name != "app":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return _app()


def _app() -> typer.Typer:
    made: typer.Typer | None = globals().get("app")
    if made is None:
        import typer

        made = globals()["app"] = typer.Typer(**_SETTINGS)
    return made


# Each command, in the order chatx --help lists them, and its line there (also the start
# of its own --help). chatx/cli/NAME.py holds the command NAME, a function of that name.
_COMMANDS = {
    "convert": "Convert a stream to another format (stdin to stdout by default).",
    "formats": (
        "List the stream formats (codecs), their aliases, the containers, the files of "
        "recorded exchanges and the compressions chatx reads."
    ),
    "validate": "Check streams against their format's rules (`chatx rules` lists them).",
    "rules": "List the validation rules, or explain one: chatx rules RSP005.",
    "diff": (
        "Compare two streams, event by event (--wire, the default for "
        "one format) or by what a client builds (--semantic, the "
        "default across formats)."
    ),
    "show": (
        "Show what a client would reconstruct from a stream: message, "
        "reasoning, tool calls, usage, finish reason."
    ),
    "collect": (
        "Print the final object a client would build from a stream (its format's "
        "non-streaming object, e.g. a chat.completion or a response) as JSON."
    ),
    "ls": (
        "List the streams in files (HAR, VCR cassettes, recordings, httprr traces, "
        "bare streams), with the FILE#N address every command takes."
    ),
    "capture": (
        "Post a request with streaming on; write the response body as it arrives into "
        "-o OUT and the request beside it as OUT.request.json (no keys)."
    ),
    "proxy": (
        "Forward requests to --upstream unchanged, stream the answers back, and record "
        "each one into --record DIR as a capture (its request beside it, secrets left out). "
        "With --upstream-api, also translate requests of every other API into the "
        "upstream's and its answers back."
    ),
    "serve": (
        "Replay captures as an OpenAI-compatible server (chat, Responses, Llama Stack): "
        "each request gets a capture transcoded into the API it called."
    ),
}
_COMPLETE = "_CHATX_COMPLETE"  # set by the completion scripts when the shell asks
_BUG = "a bug in chatx: run again with --traceback and report it"


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the program is, so it unwinds like Ctrl-C (exit 143)."""


def _register(target: Any = None, names: Iterable[str] = _COMMANDS) -> None:
    """Add each command once (main() runs many times in one test process)."""
    target = _app() if target is None else target
    have = {c.name for c in target.registered_commands}
    for module in names:
        if module in have:
            continue
        imported = __import__(f"chatx.cli.{module}", fromlist=[module])
        target.command(module, help=_COMMANDS[module])(getattr(imported, module))


_built: dict[str | None, tuple[tuple[int, ...], Any]] = {}


def _command(name: str | None = None) -> Any:
    """The click command for ``app``, built again only when the registered commands change.
    With ``name`` (the command a run names), a group of that command alone: a run loads
    the module of its own command, not the other ten (``--help`` and a name chatx does
    not know get them all)."""
    import typer

    from chatx.cli import root

    target = _app() if name is None else _alone(name)
    _register(target, _COMMANDS if name is None else (name,))
    key = tuple(map(id, target.registered_commands))
    built = _built.get(name)
    if built is None or built[0] != key:
        command = typer.main.get_command(target)
        command.params += root.options()
        built = _built[name] = (key, command)
    return built[1]


_apps: dict[str, typer.Typer] = {}


def _alone(name: str) -> typer.Typer:
    """A Typer app like ``app`` holding one command; its callback, which does nothing,
    keeps it a group, so the command is still named on the command line."""
    if name not in _apps:
        import typer

        alone = _apps[name] = typer.Typer(**_SETTINGS)
        alone.callback()(_nothing)
    return _apps[name]


def _nothing() -> None:
    pass


def _named(args: list[str]) -> str | None:
    """The command ``args`` name, when they start with one chatx has."""
    return args[0] if args and args[0] in _COMMANDS else None


def reading_stdin(fmt: str | None = None) -> None:
    """Said by a command about to read stdin: when stdin is a terminal (nothing piped in),
    chatx would otherwise sit silent, and look hung."""
    try:
        terminal = sys.stdin.isatty()
    except (AttributeError, ValueError, OSError):  # no stdin, or a closed one
        terminal = False
    if terminal:
        end = "Ctrl-Z Enter" if sys.platform == "win32" else "Ctrl-D"
        what = f"a {fmt} stream" if fmt else "a stream"
        sys.stderr.write(f"chatx: reading {what} from stdin ({end} to end, Ctrl-C to stop)\n")
        sys.stderr.flush()


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return (and exit with) the process exit code."""
    args = sys.argv[1:] if argv is None else list(argv)
    debug = "--traceback" in args or os.environ.get("CHATX_DEBUG") == "1"
    args = [a for a in args if a != "--traceback"]
    if os.environ.get(_COMPLETE):
        from chatx.cli import completion

        return completion.complete(_command(), os.environ[_COMPLETE])
    closed = _closed_streams()
    if closed:
        error(f"standard {closed} is closed")
        return ExitStatus.ERROR
    # The library reads CHATX_DEBUG where a codec fails unexpectedly: --traceback sets it.
    was = os.environ.get("CHATX_DEBUG")
    if debug:
        os.environ["CHATX_DEBUG"] = "1"
    try:
        with _signals(), _quiet_gc(), streams.quiet_stderr(), _whole_writes():
            code = _run(lambda: _command(_named(args)), args, debug)
            try:
                sys.stdout.flush()
            except BrokenPipeError:
                code = _quiet_pipe()
            except OSError as exc:  # a full disk: the output is not all there
                code = streams.output_failed(exc, code)
            except ValueError:  # stdout closed
                pass
    finally:
        if was is None:
            os.environ.pop("CHATX_DEBUG", None)
        else:
            os.environ["CHATX_DEBUG"] = was
    return code


def _closed_streams() -> str | None:
    """Started with a standard stream closed (``>&-``): Python has None in its place.

    A closed stdin reads as empty and a closed stderr as /dev/null; a closed stdout, where
    the data goes, is an error.
    """
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - for the life of the process
    if sys.stdin is None:
        sys.stdin = io.TextIOWrapper(io.BytesIO())
    return "output" if sys.stdout is None else None


def _run(load: Any, args: list[str], debug: bool) -> int:
    try:
        # Loading the commands happens inside the funnel: a signal that arrives while
        # they are imported ends the run as one arriving later does, with no traceback.
        call = _quick(args)
        if call is not None:
            return int(call() or 0)
        command = load()
        with command.make_context("chatx", args) as ctx:
            status = command.invoke(ctx)
        return int(status or 0)
    except (BrokenPipeError, SystemExit, KeyboardInterrupt) as exc:
        return _stopped(exc, debug)
    except Exception as exc:
        if isinstance(exc, _click("Exit", "Abort")):
            return _stopped(exc, debug)
        return _failed(exc, debug)


def _quick(args: list[str]) -> Callable[[], Any] | None:
    """The command ``args`` name, ready to run, when it is one of :data:`_QUICK` and its
    module reads them without click; None: the typer app is to read them."""
    if not args or args[0] not in _QUICK:
        return None
    quick: Callable[[list[str]], Callable[[], Any] | None]
    quick = import_module(f"chatx.cli.{args[0]}").quick
    return quick(args[1:])


def _click(*names: str) -> tuple[type, ...]:
    """click's exceptions of these names: none before click is imported (nothing
    raises them then)."""
    exceptions = sys.modules.get("click.exceptions")
    return tuple(getattr(exceptions, name) for name in names) if exceptions else ()


def _stopped(exc: BaseException, debug: bool) -> int:
    """The run stopped short: its reader went away, a signal, --help, an abort. Called
    while ``exc`` is handled: a bare ``raise`` raises it again."""
    if isinstance(exc, BrokenPipeError):
        return _quiet_pipe()
    if isinstance(exc, SystemExit):
        # rich's Console meets a broken pipe with SystemExit(1): quiet, as any other.
        if isinstance(exc.__context__, BrokenPipeError):
            return _quiet_pipe()
        raise
    if isinstance(exc, _click("Exit")):  # --help, or a command that exits early
        return int(getattr(exc, "exit_code", 0) or 0)
    if isinstance(exc, _click("Abort")):
        return ExitStatus.INTERRUPTED
    if debug:
        raise
    return ExitStatus.TERMINATED if isinstance(exc, Terminated) else ExitStatus.INTERRUPTED


def _failed(exc: Exception, debug: bool) -> int:
    """An error, said in one line (the traceback with --traceback). Called while ``exc``
    is handled: a bare ``raise`` raises it again."""
    if debug:
        raise
    if isinstance(exc, ChatxError):
        error(str(exc))
        return int(exc.exit_status)
    if isinstance(exc, _click("ClickException")):  # usage errors: unknown option…
        _usage_error(exc)
        return ExitStatus.ERROR
    if isinstance(exc, OSError):
        if streams.is_stdout_failure(exc):
            return streams.output_failed(exc, ExitStatus.OK)
        error(f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": "))
        return ExitStatus.ERROR
    if isinstance(exc, MemoryError):
        error("out of memory")
        return ExitStatus.ERROR
    # A bug: say so in one line, the traceback on request.
    error(f"internal error: {type(exc).__name__}: {exc} ({_BUG})")
    return ExitStatus.INTERNAL


def _usage_error(exc: Any) -> None:
    """Click's usage text and hint, then the message the chatx way, escaped."""
    ctx = getattr(exc, "ctx", None)
    if type(exc).__name__ == "NoArgsIsHelpError":  # bare `chatx`: the help is the message
        sys.stderr.write(exc.format_message() + "\n")
        return
    if ctx is not None:
        sys.stderr.write(ctx.get_usage() + "\n")
        if ctx.command.get_help_option(ctx) is not None:
            sys.stderr.write(f"Try '{ctx.command_path} {ctx.help_option_names[0]}' for help.\n")
    error(exc.format_message())


# -- signals and standard output ----------------------------------------------------------
#
# Ctrl-C (SIGINT) and SIGTERM unwind the program as KeyboardInterrupt does, except in the
# middle of a write to stdout: there the write finishes first, so the output ends with a
# whole event. A second signal during the same write does not wait (a reader that never
# reads again must not make chatx unkillable).

_writing = False
_pending: int | None = None


def _on_signal(signum: int, frame: Any) -> None:
    global _pending
    if _writing and _pending is None:
        _pending = signum
        return
    _stop(signum)


def _stop(signum: int) -> None:
    if signum == signal.SIGTERM:
        raise Terminated
    raise KeyboardInterrupt


def _after_write() -> None:
    global _writing, _pending
    _writing = False
    if _pending is not None:
        signum, _pending = _pending, None
        _stop(signum)


class _WholeWrites(io.BufferedWriter):
    """stdout's bytes layer: writes all it is given, and no signal stops it half-way.

    A plain ``FileIO`` (``python -u``, ``PYTHONUNBUFFERED``) may write part of the bytes
    and say so only in its return value; a ``BufferedWriter`` keeps going.
    """

    def write(self, data: Any) -> int:
        with _writing_out():
            return super().write(data)

    def flush(self) -> None:
        with _writing_out():
            super().flush()


@contextmanager
def _writing_out() -> Iterator[None]:
    """Around one write to stdout: a signal that comes meanwhile waits until it is done
    (:func:`_on_signal`), and a failure other than a broken pipe is said
    (``streams.stdout_failed``) before it is raised."""
    global _writing
    _writing = True
    try:
        yield
    except BrokenPipeError:
        raise
    except OSError as exc:
        streams.stdout_failed(exc)
        raise
    finally:
        _after_write()


@contextmanager
def _whole_writes() -> Iterator[None]:
    """Put a :class:`_WholeWrites` under ``sys.stdout`` while a command runs.

    Only the process's own stdout: a stream a test or an embedding program put in its
    place is left alone.
    """
    out = sys.stdout
    fd = streams.own_fd(out, sys.__stdout__)
    if fd is None:
        yield
        return
    wrapper = io.TextIOWrapper(
        _WholeWrites(io.FileIO(fd, "w", closefd=False)),
        encoding=out.encoding,
        errors=out.errors,
        line_buffering=bool(out.line_buffering),
    )
    sys.stdout = wrapper
    try:
        yield
    finally:
        sys.stdout = out
        try:
            wrapper.flush()
        except BrokenPipeError:
            _quiet_pipe()  # so that the flush when the wrapper goes says nothing either
        except (OSError, ValueError):
            pass


@contextmanager
def _signals() -> Iterator[None]:
    """SIGINT and SIGTERM handled as above while a command runs; restored after."""
    previous = {}
    try:
        for signum in (signal.SIGINT, signal.SIGTERM):
            previous[signum] = signal.signal(signum, _on_signal)
    except ValueError:  # not the main thread: leave signals alone
        pass
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@contextmanager
def _quiet_gc() -> Iterator[None]:
    # Streams make millions of short-lived, acyclic dicts: reference counting frees them,
    # and the cyclic collector's full passes over them cost a third of a conversion.
    # Undone afterwards, so that main() called in a loop (tests, fuzzing) does not keep
    # every object it ever saw frozen.
    threshold = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(100_000, 50, 1000)
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()


def _quiet_pipe() -> int:
    """The reader went away (``| head``): stop quietly, as cat does."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no file descriptor (tests)
        pass
    return ExitStatus.OK


def run() -> None:
    """Console-script entry point."""
    _keep_freed_heap()
    sys.exit(main())


def _keep_freed_heap() -> None:
    # glibc gives freed heap memory back to the OS as soon as 128 KiB of it lie free at
    # the top, and a stream's records are made and freed block after block: the heap
    # shrank and grew again on every block, a fifth of a long conversion spent in page
    # faults. Up to 64 MiB is kept instead; the peak RSS is the same.
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    with contextlib.suppress(AttributeError, OSError):  # not glibc
        ctypes.CDLL(None).mallopt(_M_TRIM_THRESHOLD, 64 << 20)


_M_TRIM_THRESHOLD = -1  # glibc's malloc.h
