"""--help as plain text, for when typer's rich panels would not fit.

typer draws a command's options as a table of five narrow columns and a help column. When the
screen is narrower than the longest flag, metavar and help word need, rich shortens the names
with "…" (`--top-up-temperatu…` at 80 columns), and when the output is not a terminal (piped,
redirected) the panels' box characters are noise. Then the help is written the way click and
argparse write it: each option on its own line, its help wrapped below, nothing ever cut, and
no line broken inside a word or a flag's name.
"""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.text import Text

MIN_HELP_WIDTH = 30
"""Columns the rich table must leave its help column for the rich layout to be used."""

_PANEL = 4  # a panel's two borders and their padding
_PAD = 2  # the padding around each column of typer's options table
_SLACK = 12  # rich narrows and pads columns in ways this sum only bounds (calibrate needs 90, bench 112)


def plain(markup: str) -> str:
    """A help text written in rich markup as the text a reader sees (`\\[upstream]` -> `[upstream]`)."""
    return Text.from_markup(markup).plain


def rich_width_needed(params: Sequence[Any], ctx: Any) -> int:
    """The columns typer's options table needs to show every flag, metavar and help word whole.

    Its columns: a required mark, the long names, the short names, the negative long and short
    names, the metavar, then the help. rich narrows the widest column first when the table is too
    wide, so the help column keeps a word whole while it is at least that word's width and no
    narrower than the widest name column; past that, names are cut.
    """
    widths = [0] * 6
    longest_word = 0
    for param in params:
        if getattr(param, "hidden", False):
            continue
        opts, secondary = list(param.opts), list(param.secondary_opts)
        columns = [
            "*" if getattr(param, "required", False) else "",
            ",".join(o for o in opts if o.startswith("--")),
            ",".join(o for o in opts if not o.startswith("--")),
            ",".join(o for o in secondary if o.startswith("--")),
            ",".join(o for o in secondary if not o.startswith("--")),
            (param.display_type_rich(ctx=ctx) or "") if hasattr(param, "display_type_rich") else "",
        ]
        bounds = [getattr(getattr(param, "type", None), end, None) for end in ("min", "max")]
        if any(b is not None for b in bounds):  # a range is shown after the type: ` [1<=x<=256]`
            columns[5] += f" [{bounds[0]}<=x<={bounds[1]}]"
        widths = [max(w, len(c)) for w, c in zip(widths, columns, strict=True)]
        record = param.get_help_record(ctx)
        if record:
            longest_word = max([longest_word, *(len(w) for w in plain(record[1]).split())])
    used = [w for w in widths if w]
    help_width = max(MIN_HELP_WIDTH, longest_word, *used)
    return _PANEL + sum(used) + _PAD * len(used) + help_width + _SLACK


def use_rich_help(params: Sequence[Any], ctx: Any) -> bool:
    """Whether typer's rich panels fit stdout: a terminal wide enough for every name whole."""
    console = Console()
    return console.is_terminal and console.width >= rich_width_needed(params, ctx)


def _wrapped(text: str, width: int, indent: str) -> list[str]:
    wrapper = textwrap.TextWrapper(
        width=max(20, width), initial_indent=indent, subsequent_indent=indent,
        break_long_words=False, break_on_hyphens=False,
    )  # fmt: skip
    return wrapper.wrap(text) or [indent.rstrip()]


def write_plain_help(command: Any, ctx: Any, formatter: Any) -> None:
    """Write `command`'s help into click's `formatter`: usage, description, arguments, options, commands.

    Args:
        command: a typer command or group (click's public API only: `format_usage`,
            `get_params`, `list_commands`, `get_command`).
        ctx: its click context.
        formatter: click's HelpFormatter; only `write` and `write_usage` are used, and its width.
    """
    width = max(40, int(getattr(formatter, "width", None) or 78))
    command.format_usage(ctx, formatter)
    for paragraph in inspect.cleandoc(plain(command.help or "")).split("\n\n"):
        if paragraph.strip():
            formatter.write("\n" + "\n".join(_wrapped(" ".join(paragraph.split()), width, "  ")) + "\n")
    params = [p for p in command.get_params(ctx) if not getattr(p, "hidden", False)]
    arguments = [p for p in params if p.param_type_name == "argument"]
    options = [p for p in params if p.param_type_name != "argument"]
    for title, group in (("Arguments", arguments), ("Options", options)):
        records = [(p, r) for p, r in ((p, p.get_help_record(ctx)) for p in group) if r]
        if not records:
            continue
        formatter.write(f"\n{title}:\n")
        for param, (names, help_text) in records:
            formatter.write(f"  {names}\n")
            described = plain(param.help or "") + help_text[len(param.help or "") :]
            formatter.write("\n".join(_wrapped(described.strip(), width, "      ")) + "\n")
    if hasattr(command, "list_commands"):
        rows = []
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not getattr(sub, "hidden", False):
                rows.append((name, plain(sub.get_short_help_str(limit=10_000))))
        if rows:
            formatter.write("\nCommands:\n")
            for name, short in rows:
                formatter.write(f"  {name}\n" + "\n".join(_wrapped(short, width, "      ")) + "\n")
