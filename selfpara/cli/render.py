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


def kept_phrase(result: WrappedAnswer) -> str:
    """What became of the k paraphrases asked for, each count under its own word: kept (the filters let
    it through, as the bench report counts it), of those answered (`k_kept`, what the vote used) and not
    needed (`skipped_paraphrases`: adaptive k had settled), rejected (`rejected`), and not written (the
    model gave fewer lines, or adaptive k asked for no more)."""
    skipped = len(result.skipped_paraphrases)
    kept = result.k_kept + skipped
    phrase = f"kept {kept} of {result.k_requested} paraphrases"
    if skipped:
        phrase += f" ({result.k_kept} answered, {skipped} not needed)"
    rejected = len(result.rejected)
    if rejected:
        phrase += f", {rejected} rejected"
    not_written = result.k_requested - kept - rejected
    if not_written > 0:
        phrase += f", {not_written} not written"
    return phrase


def vote_phrase(result: WrappedAnswer) -> str:
    """The vote share and how many answers it is over; with the original's answer alone there was no vote,
    and a share of 100% of one answer would read as a confident one."""
    if not result.doubt.voted:
        return f"no vote: {result.doubt.reason}"
    if result.n_voted <= 1:
        return "no vote: the original's answer alone"
    return f"vote share {result.vote_share:.0%} of {result.n_voted}"


def _title(result: WrappedAnswer) -> str:
    if not result.doubt.voted:  # doubt first: no paraphrase was asked for, so there is nothing to count
        return f"{result.model} · {vote_phrase(result)} · confidence {result.confidence:.2f}"
    return (
        f"{result.model} · {kept_phrase(result)} · {vote_phrase(result)}"
        f" · confidence {result.confidence:.2f} · entropy {result.entropy_normalized:.2f}"
    )


def _rows(result: WrappedAnswer) -> list[tuple[str, str, str, str, str]]:
    """One row per wording, rejected and skipped paraphrase, as plain text: (#, wording, answer,
    cluster, kind), kind being "" (answered), "failed", "top-up", "rejected" or "skipped"."""
    rows = []
    answers = {a.variant: a for a in result.answers}
    for v in result.variants:
        a = answers.get(v.index)
        index = "orig" if v.index == 0 else str(v.index)
        kind = "top-up" if v.top_up else ""
        if a is None or not a.ok:
            rows.append((index, v.text, f"failed: {a.error or '?' if a else '?'}", "-", "failed"))
            continue
        cluster = f"{a.cluster}{' ★' if a.cluster == result.winner else ''}{' (abstain)' if a.abstained else ''}"
        rows.append((index, v.text, a.text or "", cluster, kind))
    rows += [("x", r.text, f"rejected: {rejection_text(r)}", "", "rejected") for r in result.rejected]
    rows += [("-", text, "not needed (adaptive k)", "", "skipped") for text in result.skipped_paraphrases]
    return rows


def _caption(result: WrappedAnswer) -> list[tuple[str, bool]]:
    """The line under the table in parts: (text, whether it is a warning)."""
    deciders = Counter(c.decided_by for c in result.comparisons if c.decided_by != "none")
    parts = [(f"{result.usage.calls} calls" + (f", {result.calls_saved} saved" if result.calls_saved else ""), False)]
    if deciders:
        parts.append(("pairs decided by " + ", ".join(f"{name} {n}" for name, n in deciders.most_common()), False))
    if result.undecided_pairs:
        parts.append((f"{result.undecided_pairs} pair(s) undecided, counted as different", True))
    if result.doubt.voted and result.doubt.sure_above is not None:
        parts.append((f"voted: {result.doubt.reason}", False))
    if result.original_kept_reason:
        parts.append((f"original kept: {result.original_kept_reason}", False))
    if result.flags:
        parts.append(("flags: " + ", ".join(result.flags), False))
    return parts


def result_table(result: WrappedAnswer) -> Table:
    """A table for a terminal: one row per wording with its answer, cluster and whether it won."""
    table = Table(title=escape(_title(result)), show_lines=True)
    table.add_column("#", justify="right")
    table.add_column("wording")
    table.add_column("answer")
    table.add_column("cluster", justify="center")
    for index, wording, answer, cluster, kind in _rows(result):
        if kind in ("rejected", "skipped"):
            table.add_row(f"[dim]{index}[/dim]", f"[dim]{escape(wording)}[/dim]", f"[dim]{escape(answer)}[/dim]", "")
            continue
        shown = f"[red]{escape(answer)}[/red]" if kind == "failed" else escape(answer)
        wording = f"[dim](top-up, sampled)[/dim] {escape(wording)}" if kind == "top-up" else escape(wording)
        table.add_row(index, wording, shown, cluster)
    table.caption = " · ".join(f"[yellow]{escape(t)}[/yellow]" if warn else escape(t) for t, warn in _caption(result))
    return table


def result_lines(result: WrappedAnswer) -> list[str]:
    """The table's content as plain lines, for a stream that is not a terminal: one line per
    wording (`#  wording  →  answer  [cluster]`), never wrapped, so no line breaks inside a word."""
    lines = [_title(result)]
    for index, wording, answer, cluster, kind in _rows(result):
        prefix = "(top-up, sampled) " if kind == "top-up" else ""
        lines.append(f"{index:>4}  {prefix}{' '.join(wording.split())}  →  {' '.join(answer.split())}".rstrip())
        if cluster:
            lines[-1] += f"  [cluster {cluster}]"
    lines.append(" · ".join(t for t, _ in _caption(result)))
    return lines
