"""Rich renderings of a WrappedAnswer for the terminal."""

from __future__ import annotations

from collections import Counter

from rich.markup import escape
from rich.table import Table

from selfpara.result import RejectedParaphrase, WrappedAnswer


def rejection_text(rejected: RejectedParaphrase) -> str:
    """Why a paraphrase was dropped, in words: `overlap 0.86`, `not equivalent: <judge's reason>`."""
    reason = rejected.reason.replace("_", " ")
    detail = rejected.detail.strip()
    if not detail:
        return reason
    if detail.startswith(reason):  # the detail already names its reason ("overlap 0.86")
        return detail
    return f"{reason}: {detail}"


def result_table(result: WrappedAnswer) -> Table:
    """A table: one row per wording with its answer, cluster and whether it won."""
    title = (
        f"{escape(result.model)} · k {result.k_kept}/{result.k_requested} · vote share {result.vote_share:.0%}"
        f" · confidence {result.confidence:.2f}"
        f" · entropy {result.entropy_normalized:.2f}"
    )
    table = Table(title=title, show_lines=True)
    table.add_column("#", justify="right")
    table.add_column("wording")
    table.add_column("answer")
    table.add_column("cluster", justify="center")
    answers = {a.variant: a for a in result.answers}
    for v in result.variants:
        a = answers.get(v.index)
        if a is None or not a.ok:
            answer, cluster = f"[red]failed: {escape(a.error or '?') if a else '?'}[/red]", "-"
        else:
            answer = escape(a.text or "")
            cluster = f"{a.cluster}{' ★' if a.cluster == result.winner else ''}{' (abstain)' if a.abstained else ''}"
        wording = f"[dim](top-up, sampled)[/dim] {escape(v.text)}" if v.top_up else escape(v.text)
        table.add_row("orig" if v.index == 0 else str(v.index), wording, answer, cluster)
    for r in result.rejected:
        reason = f"[dim]rejected: {escape(rejection_text(r))}[/dim]"
        table.add_row("[dim]x[/dim]", f"[dim]{escape(r.text)}[/dim]", reason, "")
    for text in result.skipped_paraphrases:
        table.add_row("[dim]-[/dim]", f"[dim]{escape(text)}[/dim]", "[dim]not needed (adaptive k)[/dim]", "")
    deciders = Counter(c.decided_by for c in result.comparisons if c.decided_by != "none")
    caption = [f"{result.usage.calls} calls" + (f", {result.calls_saved} saved" if result.calls_saved else "")]
    if deciders:
        caption.append("pairs decided by " + ", ".join(f"{name} {n}" for name, n in deciders.most_common()))
    if result.undecided_pairs:
        caption.append(f"[yellow]{result.undecided_pairs} pair(s) undecided, counted as different[/yellow]")
    if result.original_kept_reason:
        caption.append(f"original kept: {escape(result.original_kept_reason)}")
    if result.flags:
        caption.append("flags: " + ", ".join(result.flags))
    table.caption = " · ".join(caption)
    return table
