"""``make bench``: whole-process timings of chatx against the orjson floor.

Every case is one ``chatx`` process (or the floor script) on a generated file, output
to /dev/null, timed wall-clock from spawn to exit; the median of K runs is reported
with the child's own peak RSS (``os.wait4`` rusage). The floor (``bench/floor.py``:
orjson load + dump of every ``data:`` line) runs on the same files in the same run,
and every case is divided by the floor of its input(s).

    python bench/run.py            # 1k, 10k, 100k (4 kinds) and 1M (main cases, 1 run)
    python bench/run.py --quick    # 1k, 10k, 100k; main directions; text only
    python bench/run.py --runs 5 --only 'chat→responses|floor' --sizes 100k

The table goes to stdout and to ``bench/results.md``.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
import exchanges  # noqa: E402
import generate as gen  # noqa: E402

ARROW = "→"
MIB = 1024 * 1024

# Main directions: the ones the quick run measures (and every size of the other kinds).
MAIN = (
    ("chat", "responses"),
    ("responses", "chat"),
    ("chat", "llama"),
    ("llama", "chat"),
    ("chat", "anthropic"),
    ("anthropic", "chat"),
    ("chat", "gemini"),
    ("gemini", "chat"),
)
STARTUP_RUNS = 15  # the CPU time's min and the wall's median of these
# Targets from issue 29 (Performance II), each against the floor measured in the run.
MIXED_FACTOR = 1.0  # chat→responses, reasoning + text + tool calls at 1M, SSE and JSON lines
FLOOR_FACTOR = 1.5  # every other direction at 1M on text
COMMAND_FACTOR = 1.5  # validate and collect at 1M
LINEAR_FACTOR = 11.0  # 1M chunks within 11x the 100k time
STARTUP_LIMIT = 0.15  # seconds
RSS_LIMIT = 100.0  # MiB at 1M chunks, every direction and container

# Children run as an installed chatx does: with its bytecode cached. (This sandbox sets
# PYTHONDONTWRITEBYTECODE=1, which recompiles every chatx module on every start.) The
# cache lives under bench/out, not next to the sources.
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
CHILD_ENV["PYTHONPYCACHEPREFIX"] = str(gen.OUT / "pycache")


@dataclass
class Case:
    name: str  # "chat→responses", "validate chat", "floor chat", …
    group: str  # convert | same | validate | diff | collect | exchanges | floor
    kind: str
    n: int
    inputs: list[gen.Source]
    argv: list[str]
    runs: int
    walls: list[float] = field(default_factory=list)
    # The floor of the same inputs, run just before each run of this case: on a shared
    # machine whose speed drifts, the ratio of the two is steadier than either wall.
    floor_walls: list[float] = field(default_factory=list)
    rss: list[float] = field(default_factory=list)
    codes: list[int] = field(default_factory=list)
    error: str = ""

    @property
    def wall(self) -> float | None:
        return statistics.median(self.walls) if self.walls else None

    @property
    def peak(self) -> float | None:
        return max(self.rss) if self.rss else None

    @property
    def records(self) -> int:
        return sum(s.records for s in self.inputs)

    @property
    def bytes(self) -> int:
        return sum(s.bytes for s in self.inputs)


# A child's ru_maxrss starts at the RSS of the process it was forked from (Linux keeps the
# old image's high-water mark across exec), so the children are forked from this tiny
# launcher (python -I -S: a few MiB), not from the benchmark process itself. It runs
# argv with output to /dev/null, kills it after the timeout, and prints
# "wall maxrss_kib exit_code".
LAUNCHER = """
import os, signal, sys, time
timeout, argv = float(sys.argv[1]), sys.argv[2:]
null = os.open(os.devnull, os.O_RDWR)
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    try:
        os.execv(argv[0], argv)
    finally:
        os._exit(127)
signal.signal(signal.SIGALRM, lambda *_: os.kill(pid, signal.SIGKILL))
signal.setitimer(signal.ITIMER_REAL, timeout)
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - start
print(wall, usage.ru_maxrss, os.waitstatus_to_exitcode(status))
"""


def measure(
    argv: list[str], timeout: float, env: dict[str, str] | None = None
) -> tuple[float, float, int]:
    """Run ``argv`` once, output to /dev/null: (wall seconds, peak RSS MiB, exit code)."""
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", LAUNCHER, str(timeout), *argv],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env or CHILD_ENV,
        check=True,
    )
    wall, rss, code = done.stdout.split()
    return float(wall), int(rss) / 1024, int(code)  # ru_maxrss is KiB on Linux


def run_case(case: Case, timeout: float, floors: dict[Path, Case]) -> None:
    label = f"{case.name} [{case.kind} {gen.size_name(case.n)}]"
    paired = [floors[s.path].argv for s in case.inputs if s.path in floors]
    for _ in range(case.runs):
        if case.group != "floor" and len(paired) == len(case.inputs):
            case.floor_walls.append(sum(measure(argv, timeout)[0] for argv in paired))
        wall, rss, code = measure(case.argv, timeout)
        if code < 0 or wall >= timeout:
            case.error = f"killed after {timeout:.0f} s"
            break
        case.walls.append(wall)
        case.rss.append(rss)
        case.codes.append(code)
    shown = f"{case.wall:.3f} s" if case.wall is not None else case.error
    print(f"  {label:<44} {shown}", file=sys.stderr, flush=True)


def has_command(chatx: list[str], name: str) -> bool:
    done = subprocess.run([*chatx, name, "--help"], capture_output=True)
    return done.returncode == 0


# -- the plan ------------------------------------------------------------------------------


class Planner:
    """Builds the list of cases: every input's floor first, then what runs on it."""

    def __init__(
        self, args: argparse.Namespace, chatx: list[str], formats: list[str], commands: set[str]
    ) -> None:
        self.args = args
        self.chatx = chatx
        self.formats = formats
        self.commands = commands
        self.cases: list[Case] = []
        self.floors: dict[Path, Case] = {}

    def wanted(self, name: str) -> bool:
        return not self.args.only or re.search(self.args.only, name) is not None

    def add(
        self,
        name: str,
        group: str,
        kind: str,
        n: int,
        formats: list[str],
        tail: list[str],
        runs: int,
    ) -> None:
        """A case on the ``formats`` sources; ``tail`` follows ``chatx`` and the paths are
        substituted for ``{0}``, ``{1}``."""
        if any(f not in self.formats for f in formats) or not self.wanted(name):
            return
        inputs = [gen.ensure(kind, n, fmt) for fmt in formats]
        for fmt, src in zip(formats, inputs, strict=True):
            floor = self.floors.get(src.path)
            if floor is None:
                floor = Case(
                    f"floor {fmt}",
                    "floor",
                    kind,
                    n,
                    [src],
                    [sys.executable, str(gen.BENCH / "floor.py"), str(src.path)],
                    runs,
                )
                self.floors[src.path] = floor
                self.cases.append(floor)
            floor.runs = max(floor.runs, runs)
        if group != "floor":
            argv = [*self.chatx, *(t.format(*(str(s.path) for s in inputs)) for t in tail)]
            self.cases.append(Case(name, group, kind, n, inputs, argv, runs))

    def convert(
        self, kind: str, n: int, a: str, b: str, runs: int, container: str | None = None
    ) -> None:
        if b not in self.formats:
            return
        tail = ["convert", "{0}", "--to", gen.FORMATS[b], "-q"]
        if container is not None:
            tail += ["--out-container", container]
        self.add(
            f"{a}{ARROW}{b}" + (f" {container}" if container else ""),
            "same" if a == b else "convert",
            kind,
            n,
            [a],
            tail,
            runs,
        )

    def validate(self, kind: str, n: int, fmt: str, runs: int) -> None:
        if "validate" in self.commands:
            self.add(f"validate {fmt}", "validate", kind, n, [fmt], ["validate", "{0}"], runs)

    def collect(self, kind: str, n: int, fmt: str, runs: int) -> None:
        if "collect" in self.commands:
            self.add(f"collect {fmt}", "collect", kind, n, [fmt], ["collect", "{0}", "-q"], runs)

    def diff(self, kind: str, n: int, a: str, b: str, runs: int) -> None:
        if "diff" in self.commands:
            self.add(
                f"diff --semantic {a} {b}",
                "diff",
                kind,
                n,
                [a, b],
                ["diff", "--semantic", "{0}", "{1}"],
                runs,
            )

    def size(self, n: int, kind: str) -> None:
        big = n >= 1_000_000
        runs = self.args.runs_1m if big else self.args.runs
        self.directions(kind, n, runs)
        if kind == "text":
            self.commands_on(kind, n, runs, big)
        if kind == "text" and big and not self.args.quick:
            self.exchanges(kind, n, runs)

    def exchanges(self, kind: str, n: int, runs: int) -> None:
        """The stream as the one body of a file of exchanges, in each layout
        (``bench/exchanges.py``): listed, and converted to Responses."""
        for layout, (_, _, fmt) in exchanges.LAYOUTS.items():
            if fmt not in self.formats:
                continue
            stream = gen.ensure(kind, n, fmt)
            for name, tail in (("ls", ["ls", "{0}"]),
                               (f"{fmt}{ARROW}responses", ["convert", "{0}#0", "--to",
                                                          "responses-event", "-q"])):  # fmt: skip
                if not self.wanted(f"{name} {layout}"):
                    continue
                path = exchanges.ensure(layout, stream.path)
                source = gen.Source(path, stream.records, path.stat().st_size)
                argv = [*self.chatx, *(t.format(path) for t in tail)]
                self.cases.append(
                    Case(f"{name} {layout}", "exchanges", kind, n, [source], argv, runs)
                )

    def directions(self, kind: str, n: int, runs: int) -> None:
        """Every direction of the text kind (each format into itself too), the main ones
        of the others, and of all with --quick."""
        if self.args.quick or kind != "text":
            for a, b in MAIN:
                self.convert(kind, n, a, b, runs)
            return
        for a in self.formats:
            for b in self.formats:
                if a != b:
                    self.convert(kind, n, a, b, runs)
        for a in self.formats:  # a stream converted into its own format
            self.convert(kind, n, a, a, runs)

    def commands_on(self, kind: str, n: int, runs: int, big: bool) -> None:
        """validate, diff and collect on the text kind, and its floors."""
        validated = ("chat", "responses") if self.args.quick else tuple(self.formats)
        for fmt in validated:
            self.validate(kind, n, fmt, runs)
        self.diff(kind, n, "chat", "responses", runs)
        if not self.args.quick:
            for fmt in self.formats:
                self.collect(kind, n, fmt, runs)
        if not self.args.quick and not big:
            self.diff(kind, n, "chat", "llama", runs)
        for fmt in self.formats:
            self.add(f"floor {fmt}", "floor", kind, n, [fmt], [], runs)


def plan(
    args: argparse.Namespace,
    chatx: list[str],
    formats: list[str],
    commands: set[str],
    notes: list[str],
) -> list[Case]:
    planner = Planner(args, chatx, formats, commands)
    for n in (gen.SIZES[s] for s in args.sizes):
        for kind in args.kinds:
            if n < 1_000_000 or kind == "text":
                planner.size(n, kind)
            elif kind == "mixed":  # at 1M: reasoning, text and tool calls, SSE and JSON lines
                planner.convert(kind, n, "chat", "responses", args.runs_1m)
                planner.convert(kind, n, "chat", "responses", args.runs_1m, "jsonl")
    if "llama" not in formats:
        notes.append("llama-stack-event is not a chatx format yet: its directions are skipped.")
    for command in ("validate", "diff", "collect"):
        if command not in commands:
            notes.append(f"`chatx {command}` does not exist yet: its cases are skipped.")
    return planner.cases


# -- start-up ------------------------------------------------------------------------------


def warm_up(chatx: list[str], formats: list[str], commands: set[str]) -> None:
    """One run of each command shape, so every module's bytecode is cached."""
    capture = gen.ensure_startup()
    for fmt in formats:
        measure([*chatx, "convert", str(capture.path), "--to", gen.FORMATS[fmt], "-q"], 60)
    if "validate" in commands:
        measure([*chatx, "validate", str(capture.path)], 60)
    if "diff" in commands:
        measure([*chatx, "diff", "--semantic", str(capture.path), str(capture.path)], 60)
    if "collect" in commands:
        measure([*chatx, "collect", str(capture.path), "-q"], 60)
    measure([sys.executable, str(gen.BENCH / "floor.py"), str(capture.path)], 60)


def cpu_time(argv: list[str], env: dict[str, str] | None = None) -> float:
    """Run ``argv`` once, output to /dev/null: its CPU seconds (user + system), which a
    shared machine's load inflates far less than the wall time."""
    child = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env or CHILD_ENV,
    )
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime


def startup(chatx: list[str], runs: int, timeout: float) -> dict[str, object]:
    capture = gen.ensure_startup()
    argv = [*chatx, "convert", str(capture.path), "--to", "responses-event", "-q"]
    walls = [measure(argv, timeout)[0] for _ in range(runs)]
    cpus = [cpu_time(argv) for _ in range(runs)]
    bare_cpus = [cpu_time([sys.executable, "-c", "pass"]) for _ in range(runs)]
    bare = [measure([sys.executable, "-c", "pass"], timeout)[0] for _ in range(runs)]
    uncached = {**CHILD_ENV, "PYTHONDONTWRITEBYTECODE": "1"}
    uncached.pop("PYTHONPYCACHEPREFIX")
    cold = [measure(argv, timeout, uncached)[0] for _ in range(runs)]
    done = subprocess.run(
        [
            sys.executable,
            "-X",
            "importtime",
            "-m",
            "chatx",
            "convert",
            str(capture.path),
            "--to",
            "responses-event",
            "-q",
        ],
        capture_output=True,
        text=True,
        env=CHILD_ENV,
    )
    tops = []
    for line in done.stderr.splitlines():
        match = re.match(r"import time:\s+(\d+) \|\s+(\d+) \| (\S.*)$", line)
        if match:  # top-level imports only: the package column is not indented
            tops.append((int(match.group(2)), match.group(3)))
    tops.sort(reverse=True)
    modules = set(re.findall(r"\| +([\w.]+)$", done.stderr, re.M))
    return {
        "records": capture.records,
        "wall": statistics.median(walls),
        "cpu": min(cpus),
        "bare_cpu": min(bare_cpus),
        **_loaded(argv[argv.index("convert") :]),
        "bare": statistics.median(bare),
        "cold": statistics.median(cold),
        "imports": tops[:8],
        "openai": "openai" in modules,
        "pydantic": "pydantic" in modules,
    }


_LOADED = """
import os, sys
from chatx.cli import main
sys.stdout = open(os.devnull, "w")
main(sys.argv[1:])
loaded = [m.split(".")[0] for m in sys.modules]
sys.__stdout__.write(f"{loaded.count('chatx')} {' '.join(sorted({'typer', 'click', 'rich'} & set(loaded)))}")
"""


def _loaded(args: list[str]) -> dict[str, object]:
    """The chatx modules a run of ``chatx ARGS`` imports (``-X importtime`` does not list
    those ``importlib.import_module`` imports: a codec's parts), and which of typer,
    click and rich."""
    done = subprocess.run(
        [sys.executable, "-c", _LOADED, *args], capture_output=True, text=True, env=CHILD_ENV
    )
    count, *libraries = done.stdout.split()
    return {"chatx_modules": int(count), "cli_libraries": libraries}


# -- the report ----------------------------------------------------------------------------


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    commit = (
        subprocess.run(
            ["git", "-C", str(gen.ROOT), "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
        ).stdout.strip()
        or "?"
    )
    return (
        f"{cpu}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}; "
        f"Python {platform.python_version()}, orjson {orjson.__version__}; chatx {commit}"
    )


def floor_of(case: Case, floors: dict[Path, Case]) -> float | None:
    """The floor's wall on the case's inputs: the runs paired with it when there are."""
    if case.floor_walls:
        return statistics.median(case.floor_walls)
    walls = [floors[s.path].wall for s in case.inputs if s.path in floors]
    if len(walls) != len(case.inputs) or any(w is None for w in walls):
        return None
    return sum(walls)  # type: ignore[arg-type]


def row(case: Case, floors: dict[Path, Case]) -> list[str]:
    wall = case.wall
    base = floor_of(case, floors)
    note = case.error
    codes = sorted(set(case.codes) - {0})
    if codes:
        note = f"exit {','.join(map(str, codes))}"
        if case.group == "diff":
            note += " (streams differ)"
        elif case.group == "validate":
            note += " (violations reported)"
    if wall is None:
        return [case.name, case.kind, gen.size_name(case.n), "0", "-", "-", "-", "-", "-", note]
    return [
        case.name,
        case.kind,
        gen.size_name(case.n),
        str(len(case.walls)),
        f"{wall:.3f}",
        f"{case.records / wall:,.0f}",
        f"{case.bytes / 1e6 / wall:.1f}",
        f"{case.peak:.1f}",
        f"{wall / base:.2f}" if base else "-",
        note,
    ]


HEADER = [
    "case",
    "kind",
    "size",
    "runs",
    "wall s",
    "events/s",
    "MB/s",
    "peak RSS MiB",
    "× floor",
    "note",
]


def text_table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [HEADER, *rows]) for i in range(len(HEADER))]
    right = {3, 4, 5, 6, 7, 8}

    def fmt(r: list[str]) -> str:
        return "  ".join(
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=True))
        ).rstrip()

    return "\n".join([fmt(HEADER), fmt(["-" * w for w in widths]), *map(fmt, rows)])


def md_table(rows: list[list[str]]) -> str:
    lines = [
        "| " + " | ".join(HEADER) + " |",
        "|"
        + "|".join("---:" if i in (3, 4, 5, 6, 7, 8) else "---" for i in range(len(HEADER)))
        + "|",
    ]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    return "\n".join(lines)


def checks(
    cases: list[Case], floors: dict[Path, Case], start: dict[str, object] | None
) -> list[str]:
    """The issue's targets, each with what this run measured."""
    by = {(c.name, c.kind, c.n): c for c in cases}
    out = _floor_checks(cases, floors)
    out += _scale_checks(cases, by)
    if start:
        wall = float(start["wall"])  # type: ignore[arg-type]
        cpu = float(start["cpu"])  # type: ignore[arg-type]
        out.append(
            f"{_mark(wall <= STARTUP_LIMIT)} start-up: {wall:.3f} s (target ≤ {STARTUP_LIMIT} s; "
            f"CPU {cpu * 1000:.0f} ms)"
        )
        out.append(f"{_mark(not start['openai'])} start-up does not import openai")
    return out


def _mark(ok: bool) -> str:
    return "ok  " if ok else "MISS"


def _floor_checks(cases: list[Case], floors: dict[Path, Case]) -> list[str]:
    """At 1M: chat→responses on the mixed stream within MIXED_FACTOR of the floor, every
    other conversion on text within FLOOR_FACTOR, validate and collect within
    COMMAND_FACTOR."""
    out = []
    for case in cases:
        base = floor_of(case, floors)
        if case.group == "floor" or case.wall is None or not base or case.n < 1_000_000:
            continue
        ratio = case.wall / base
        if case.kind == "mixed":
            limit = MIXED_FACTOR
        elif case.group in ("convert", "same"):
            limit = FLOOR_FACTOR
        elif case.group in ("validate", "collect"):
            limit = COMMAND_FACTOR
        else:
            continue
        out.append(
            f"{_mark(ratio <= limit)} {case.name} [{case.kind} 1M]: "
            f"{ratio:.2f}× the floor's time (target ≤ {limit:.1f}×)"
        )
    return out


def _scale_checks(cases: list[Case], by: dict[tuple[str, str, int], Case]) -> list[str]:
    """At 1M: time linear in the size (against 100k), peak memory under RSS_LIMIT."""
    out = []
    for case in cases:
        small = by.get((case.name, case.kind, 100_000))
        if case.group == "floor" or case.n != 1_000_000:
            continue
        if case.wall and small and small.wall:
            ratio = case.wall / small.wall
            out.append(
                f"{_mark(ratio <= LINEAR_FACTOR)} linear {case.name}: 1M takes "
                f"{ratio:.1f}× the 100k time (target ≤ {LINEAR_FACTOR:.0f}×)"
            )
        if case.peak is not None:
            out.append(
                f"{_mark(case.peak <= RSS_LIMIT)} memory {case.name} [{case.kind}] 1M: "
                f"{case.peak:.0f} MiB peak (target ≤ {RSS_LIMIT:.0f} MiB)"
            )
    return out


def report(
    cases: list[Case],
    start: dict[str, object] | None,
    notes: list[str],
    args: argparse.Namespace,
    elapsed: float,
    where: str,
) -> tuple[str, str]:
    floors = {c.inputs[0].path: c for c in cases if c.group == "floor"}
    order = {"floor": 0, "convert": 1, "same": 2, "validate": 3, "diff": 4, "collect": 5,
             "exchanges": 6}  # fmt: skip
    cases = sorted(cases, key=lambda c: (c.n, gen.KINDS.index(c.kind), order[c.group]))
    rows = [row(c, floors) for c in cases]
    results = checks(cases, floors, start)
    head = [
        f"Machine: {where}",
        "Run: `" + " ".join(["python bench/run.py", *args.argv]) + "`",
        f"Timing: whole process, output to /dev/null, median of {args.runs} runs "
        f"({args.runs_1m} at 1M), chatx's bytecode cached (PYTHONPYCACHEPREFIX="
        f"bench/out/pycache); peak RSS is the child's own (wait4). events/s and "
        f"MB/s count the input (all data: records, [DONE] included); × floor divides "
        f"the wall time by the floor's on the same input file(s), run just before each run "
        f"of the case. Total "
        f"{elapsed:.0f} s.",
    ]
    if any(c.n == 1_000_000 for c in cases):
        head.append(
            "1M: the text kind only; every direction (each format into itself too), "
            "validate, diff --semantic chat responses, collect and the floors."
        )
    lines_md = ["# chatx benchmark", "", *[f"- {h}" for h in head + notes], "", md_table(rows), ""]
    lines_txt = [*head, *notes, "", text_table(rows), ""]
    if start:
        imports = ", ".join(f"{name} {us / 1000:.0f} ms" for us, name in start["imports"])  # type: ignore[union-attr]
        text = (
            f"Start-up: `chatx convert` on a {start['records']}-event capture: "
            f"median {float(start['wall']):.3f} s of {STARTUP_RUNS} runs, "  # type: ignore[arg-type]
            f"CPU (user + system) min {float(start['cpu']) * 1000:.0f} ms "  # type: ignore[arg-type]
            f"(`python -c pass` {float(start['bare_cpu']) * 1000:.0f} ms); "  # type: ignore[arg-type]
            f"{start['chatx_modules']} chatx modules imported; typer, click, rich "
            f"imported: {', '.join(start['cli_libraries']) or 'none'} "  # type: ignore[arg-type]
            f"(bare `python -c pass`: {float(start['bare']):.3f} s; without chatx's "  # type: ignore[arg-type]
            f"bytecode cache, as with PYTHONDONTWRITEBYTECODE=1 on an uncompiled "
            f"checkout: {float(start['cold']):.3f} s). "  # type: ignore[arg-type]
            f"Heaviest top-level imports: {imports}. openai imported: "
            f"{'YES' if start['openai'] else 'no'}; pydantic imported: "
            f"{'yes' if start['pydantic'] else 'no'}."
        )
        lines_md += ["## Start-up", "", text, ""]
        lines_txt += [text, ""]
    if results:
        lines_md += ["## Targets", "", *[f"- `{r[:4]}` {r[5:]}" for r in results], ""]
        lines_txt += ["Targets:", *[f"  {r}" for r in results], ""]
    return "\n".join(lines_txt), "\n".join(lines_md)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="1k, 10k and 100k; main directions; text only"
    )
    parser.add_argument("--runs", type=int, default=3, help="runs per case (median)")
    # One run at 1M is within the noise of a shared machine (whose speed moves by up to
    # half within minutes): a target would be missed, or met, by chance.
    parser.add_argument("--runs-1m", type=int, default=3, help="runs per case at 1M (median)")
    parser.add_argument("--sizes", nargs="+", choices=tuple(gen.SIZES), default=None)
    parser.add_argument("--kinds", nargs="+", choices=gen.KINDS, default=None)
    parser.add_argument("--only", help="regular expression: cases whose name matches")
    parser.add_argument("--no-startup", action="store_true")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per run")
    parser.add_argument("--output", type=Path, default=gen.BENCH / "results.md")
    args = parser.parse_args(argv)
    args.argv = sys.argv[1:] if argv is None else argv
    if args.sizes is None:
        args.sizes = ["1k", "10k", "100k"] if args.quick else list(gen.SIZES)
    if args.kinds is None:
        args.kinds = ["text"] if args.quick else list(gen.KINDS)
    began = time.perf_counter()
    where = machine()
    chatx = gen.chatx_command()
    formats = gen.available_formats()
    commands = {c for c in ("validate", "diff", "collect") if has_command(chatx, c)}
    notes: list[str] = []
    print("preparing inputs…", file=sys.stderr, flush=True)
    cases = plan(args, chatx, formats, commands, notes)
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    warm_up(chatx, formats, commands)
    start = None
    if not args.no_startup:
        start = startup(chatx, STARTUP_RUNS, args.timeout)
        print(
            f"  start-up                                     {start['wall']:.3f} s",
            file=sys.stderr,
            flush=True,
        )
    floors = {c.inputs[0].path: c for c in cases if c.group == "floor"}
    for case in cases:
        run_case(case, args.timeout, floors)
    text, markdown = report(cases, start, notes, args, time.perf_counter() - began, where)
    print(text)
    args.output.write_text(markdown + kept(args.output))
    print(f"written to {args.output}", file=sys.stderr)
    return 0


# Sections measured by hand (bench/big_har.py's HAR listing) follow this line in
# results.md; a run keeps them.
KEPT = "<!-- measured by hand: bench/run.py keeps what follows -->"


def kept(path: Path) -> str:
    """What follows :data:`KEPT` in the results written before, with the line itself."""
    try:
        old = path.read_text()
    except FileNotFoundError:
        return ""
    at = old.find(KEPT)
    return "" if at < 0 else "\n" + old[at:]


if __name__ == "__main__":
    sys.exit(main())
