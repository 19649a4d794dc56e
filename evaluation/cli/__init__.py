"""The evaluation commands of the `selfpara` CLI: `bench`, `report`, `metrics` and `calibrate`.

They live with the evaluation package (which depends on selfpara, never the reverse) and
join the CLI through the `selfpara.commands` entry-point group declared in
pyproject.toml: `selfpara.cli` calls `register_commands(app)` when it builds the CLI.
Each command imports its heavy dependencies inside its body, so `selfpara --help` stays fast.
"""

from __future__ import annotations

import inspect

import typer


def register_commands(app: typer.Typer) -> None:
    """Add `bench`, `report`, `metrics` and `calibrate` to the CLI `app`."""
    # Registered also without their extra, so that --help lists them; their help then says what
    # to install (numpy and jinja2 are what every one of them imports; ROUGE is optional).
    from rich.markup import escape

    from evaluation.cli.bench import bench
    from evaluation.cli.calibrate import calibrate
    from evaluation.cli.metrics import metrics
    from evaluation.cli.report import report
    from selfpara.cli.conventions import Command
    from selfpara.util import install_note

    note = escape(install_note("bench", ("numpy", "jinja2")))  # help texts are rich markup
    for command in (bench, metrics, report, calibrate):
        doc = inspect.getdoc(command) or ""
        if note:
            first = doc.split("\n\n", 1)[0].replace("\n", " ")
            short = f"{first} (needs {escape('selfpara[bench]')})"
            app.command(cls=Command, help=f"{doc}\n\n{note}", short_help=short)(command)
        else:
            app.command(cls=Command)(command)
