"""The metrics table: how each metric is presented, estimates with CIs, paired comparisons."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class MetricInfo(BaseModel):
    """How to present a metric."""

    title: str
    description: str
    higher_is_better: bool | None = True
    binary: bool = False
    """One 0/1 outcome per question (McNemar applies to paired comparisons)."""


METRIC_INFO: dict[str, MetricInfo] = {
    "A_orig": MetricInfo(title="A_orig", description="accuracy on the original wording", binary=True),
    "A_exp": MetricInfo(title="A_exp", description="expected accuracy over paraphrases (share correct)"),
    "A_mv": MetricInfo(title="A_mv", description="majority label of the paraphrases is correct", binary=True),
    "A_any": MetricInfo(title="A_any", description="some variant correct (latent capacity)", binary=True),
    "A_strict": MetricInfo(title="A_strict", description="every variant correct (reliable capacity)", binary=True),
    "mismatch": MetricInfo(
        title="mismatch",
        description="original label differs from the paraphrases' majority label",
        higher_is_better=False,
        binary=True,
    ),
    "flip_cw": MetricInfo(
        title="C→W flips", description="original correct, paraphrase majority not correct", higher_is_better=False
    ),
    "flip_wc": MetricInfo(
        title="W→C flips", description="original not correct, paraphrase majority correct", higher_is_better=None
    ),
    "ND": MetricInfo(
        title="ND", description="paraphrase labels conflict (mode share < 1)", higher_is_better=False, binary=True
    ),
    "IID": MetricInfo(title="IID mismatch", description="1 − Σ p_c² over paraphrase labels", higher_is_better=False),
    "entropy": MetricInfo(
        title="label entropy", description="−Σ p_c ln p_c / ln 3 over paraphrase labels", higher_is_better=False
    ),
    "gap_any_strict": MetricInfo(title="A_any − A_strict", description="reliability gap", higher_is_better=False),
    "gap_exp_strict": MetricInfo(
        title="A_exp − A_strict", description="reliability gap (expected)", higher_is_better=False
    ),
}
BINARY_METRICS = frozenset(name for name, info in METRIC_INFO.items() if info.binary)


def consistency_info(name: str, threshold: float, soft: bool) -> MetricInfo:
    """How to present consistency metric `name` (binary at `threshold`, or its soft mean score)."""
    what = {
        "exact": "normalized exact match",
        "math": "same final answer",
        "rouge1": "ROUGE-1 F",
        "bertscore": "BERTScore F1 (MiniLM)",
        "nli": "NLI entailment",
        "noncontra": "NLI non-contradiction",
    }
    label = what.get(name, name)
    detail = f"mean {label}" if soft else (f"{label} ≥ {threshold:g}" if name not in ("exact", "math") else label)
    return MetricInfo(
        title=f"Cons({name}{', soft' if soft else ''})",
        description=f"answer consistency over ordered pairs of the variant set: {detail}",
    )


class Estimate(BaseModel):
    """A metric's value with its CI; None where no question defines it."""

    value: float | None
    lo: float | None = None
    hi: float | None = None
    n: int = Field(0, description="Questions that count toward this metric.")
    interval: Literal["bootstrap", "wilson", "too_few"] = Field(
        "bootstrap",
        description="How lo/hi were made: a percentile bootstrap over questions, Wilson's score interval "
        "(a metric that is one yes/no outcome per question), or none: too few questions for a bootstrap.",
    )

    def fmt(self, digits: int = 3, percent: bool = False) -> str:
        """'0.623 [0.580, 0.667]' (or in percent), '0.833 (n=3: too few questions)', '–' when undefined."""
        if self.value is None:
            return "–"
        scale, unit = (100.0, "") if percent else (1.0, "")
        d = max(digits - 2, 1) if percent else digits
        v = f"{self.value * scale:.{d}f}{unit}"
        if self.interval == "too_few":
            return f"{v} (n={self.n}: too few questions)"
        if self.lo is None or self.hi is None:
            return v
        return f"{v} [{self.lo * scale:.{d}f}, {self.hi * scale:.{d}f}]"


class PairedComparison(BaseModel):
    """Group a minus group b on one metric, over the questions both answered."""

    metric: str
    a: str
    b: str
    value_a: float | None
    value_b: float | None
    diff: float | None
    lo: float | None
    hi: float | None
    p_value: float | None
    test: Literal["mcnemar-exact", "mcnemar-chi2", "permutation", "none"]
    n: int = Field(description="Questions in common (for McNemar: where both define the metric).")
    discordant: tuple[int, int] | None = Field(None, description="McNemar: (a right & b wrong, a wrong & b right).")

    def fmt(self, digits: int = 3, scale: float = 1.0) -> str:
        """'+0.050 [-0.010, +0.110]', '+0.333 (n=3: too few questions)' without an interval, '–' undefined.

        Args:
            digits: decimals.
            scale: 100 for percent points.
        """
        if self.diff is None:
            return "–"
        diff = f"{self.diff * scale:+.{digits}f}"
        if self.lo is None or self.hi is None:
            return f"{diff} (n={self.n}: too few questions)"
        return f"{diff} [{self.lo * scale:+.{digits}f}, {self.hi * scale:+.{digits}f}]"


class MetricsTable(BaseModel):
    """Every metric of every group with CIs, and paired comparisons."""

    groups: dict[str, dict[str, Estimate]]
    metrics: list[str] = Field(description="Metric names in table order.")
    info: dict[str, MetricInfo] = Field(default_factory=dict)
    questions: dict[str, int] = Field(default_factory=dict, description="Questions per group.")
    variants: dict[str, float] = Field(default_factory=dict, description="Mean paraphrases per question, per group.")
    include_original: bool = True
    consistency: list[str] = Field(default_factory=list, description="Consistency metric names computed.")
    confidence: float = 0.95
    n_boot: int = 1000
    seed: int = 0
    comparisons: list[PairedComparison] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    def value(self, group: str, metric: str) -> float | None:
        return self.groups[group][metric].value

    def comparison(self, metric: str, a: str | None = None, b: str | None = None) -> PairedComparison | None:
        for c in self.comparisons:
            if c.metric == metric and (a is None or c.a == a) and (b is None or c.b == b):
                return c
        return None

    def to_markdown(self, digits: int = 3) -> str:
        """The table as Markdown: metrics × groups, value [lo, hi]; then the comparisons."""
        names = list(self.groups)
        lines = ["| metric | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
        for metric in self.metrics:
            title = self.info[metric].title if metric in self.info else metric
            lines.append(f"| {title} | " + " | ".join(self.groups[g][metric].fmt(digits) for g in names) + " |")
        if self.comparisons:
            lines += ["", "| metric | a − b | diff [95% CI] | p | test |", "|---|---|---|---|---|"]
            for c in self.comparisons:
                title = self.info[c.metric].title if c.metric in self.info else c.metric
                diff = c.fmt(digits)
                p = "–" if c.p_value is None else f"{c.p_value:.3g}"
                lines.append(f"| {title} | {c.a} − {c.b} | {diff} | {p} | {c.test} |")
        return "\n".join(lines)
