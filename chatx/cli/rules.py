"""``chatx rules``: list the validation rules, or explain one (as ``ruff rule`` does)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import orjson
import typer

from chatx.cli.formats import TextOrJson, complete_format, rules_format_option
from chatx.errors import UsageError

if TYPE_CHECKING:  # the rules are imported by the command, not at every start
    from chatx.validation.rule import Rule


def rules(
    rule_id: Annotated[
        str | None, typer.Argument(help="A rule id (e.g. RSP005) to explain.")
    ] = None,
    fmt: Annotated[
        str | None,
        typer.Option(
            "--format",
            help="Only the rules of this format (and those of any stream); 'any': only those.",
            callback=rules_format_option,
            autocompletion=complete_format,
        ),
    ] = None,
    output: TextOrJson = "text",
) -> int:
    from chatx.validation import RULES, get_rule

    if output not in ("text", "json"):
        raise UsageError(f"--output takes 'text' or 'json', not {output!r}")
    if rule_id is not None:
        rule = get_rule(rule_id)
        if rule is None:
            raise UsageError(f"unknown rule {rule_id!r} (`chatx rules` lists them)")
        selected = [rule]
    else:
        selected = [r for r in RULES.values() if fmt is None or r.format in (fmt, "any")]
        if not selected:
            raise UsageError(f"no rules for format {fmt!r}")
    if output == "json":
        for rule in selected:
            sys.stdout.write(orjson.dumps(rule).decode() + "\n")
    elif rule_id is not None:
        _explain(selected[0])
    else:
        _table(selected)
    return 0


def _table(selected: list[Rule]) -> None:
    if not sys.stdout.isatty():
        # Pipes get one line per rule, unwrapped, for grep and cut.
        for rule in selected:
            schema = " [--schema]" if rule.schema else ""
            sys.stdout.write(
                f"{rule.id}  {rule.severity}  {rule.format:<17}  {rule.summary}{schema}\n"
            )
        return
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    # Text() cells: rule summaries contain brackets, which rich would read as markup.
    table = Table(box=None, pad_edge=False, show_edge=False)
    for column in ("id", "sev", "format", "summary"):
        table.add_column(column, no_wrap=column != "summary")
    for rule in selected:
        table.add_row(
            Text(rule.id),
            Text(rule.severity),
            Text(rule.format),
            Text(rule.summary + (" [--schema]" if rule.schema else "")),
        )
    Console(highlight=False).print(table)


def _explain(rule: Rule) -> None:
    import textwrap

    severity = {"E": "error", "W": "warning"}[rule.severity]
    schema = ", only with --schema" if rule.schema else ""
    lines = [
        f"{rule.id} ({severity}, {rule.format}{schema})",
        "",
        rule.summary,
        "",
        textwrap.fill(rule.explanation, width=88),
        "",
        "Bad example:",
        textwrap.indent(rule.bad_example, "    "),
    ]
    sys.stdout.write("\n".join(lines) + "\n")
