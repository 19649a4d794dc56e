"""Rich renderings of a WrappedAnswer for the terminal."""

from __future__ import annotations

from rich.table import Table

from selfpara.result import WrappedAnswer


def result_table(result: WrappedAnswer) -> Table:
    """A table: one row per wording with its answer, cluster and whether it won."""
    table = Table(title=f"{result.model} · k {result.k_kept}/{result.k_requested} · vote share {result.vote_share:.0%}"
                  f" · entropy {result.entropy_normalized:.2f}", show_lines=True)
    table.add_column("#", justify="right")
    table.add_column("wording")
    table.add_column("answer")
    table.add_column("cluster", justify="center")
    answers = {a.variant: a for a in result.answers}
    for v in result.variants:
        a = answers.get(v.index)
        if a is None or not a.ok:
            answer, cluster = f"[red]failed: {a.error if a else '?'}[/red]", "-"
        else:
            answer = a.text or ""
            cluster = f"{a.cluster}{' ★' if a.cluster == result.winner else ''}{' (abstain)' if a.abstained else ''}"
        table.add_row("orig" if v.index == 0 else str(v.index), v.text, answer, cluster)
    for r in result.rejected:
        table.add_row("[dim]x[/dim]", f"[dim]{r.text}[/dim]", f"[dim]rejected: {r.reason} {r.detail}[/dim]", "")
    return table
