"""The evaluation commands of the `selfpara` CLI: `bench`, `report` and `metrics`.

They live with the evaluation package (which depends on selfpara, never the reverse) and
join the CLI through the `selfpara.commands` entry-point group declared in
pyproject.toml: `selfpara.cli` calls `register_commands(app)` when it builds the CLI.
Each command imports its heavy dependencies inside its body, so `selfpara --help` stays fast.
"""

from __future__ import annotations

import typer


def register_commands(app: typer.Typer) -> None:
    """Add `bench`, `report` and `metrics` to the CLI `app`."""
    from evaluation.cli.bench import bench
    from evaluation.cli.metrics import metrics
    from evaluation.cli.report import report

    for command in (bench, metrics, report):
        app.command()(command)
