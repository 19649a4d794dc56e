"""Write evaluation/data/sample.jsonl: the built-in sample set of selfpara.

Short factual and arithmetic questions, easy enough for a small model to get some
right, each with gold aliases and three written, meaning-preserving paraphrases
(variants 1..3) so that benchmarks need no paraphrase generation. The hand-written
tables (questions, wordings, templates, units) are in scripts/sample_tables.json; this
script draws the arithmetic operands and computes every arithmetic and unit-conversion
gold, never typed. Deterministic: running it again writes the same file.

    python scripts/make_sample.py            # rewrite sample.jsonl
    python scripts/make_sample.py --check    # fail if the file is out of date

sample_tables.json holds:
- `number_words`: number -> its words, for the gold aliases of whole numbers;
- `capitals`: `templates` (`{c}` the country, `{p}` its possessive) and `countries`,
  each `[country as it reads inside a sentence, [capital aliases]]`;
- `facts`: per category, items `{"gold": [aliases], "wordings": [original, 3 paraphrases]}`;
- `counts`: `{"number": n, "wordings": [...]}`, the gold aliases made from n;
- `arithmetic`: per operation, question templates over `{a}` and `{b}` (the first is the
  original wording);
- `word_problems`: `{"operation", "answer" (a formula of a, b, c in ANSWERS), "wordings"}`;
- `conversions`: `units` as `[from, to, factor]`, `templates` over `{a}`, `{frm}`, `{to}`,
  and `dozen_templates` for the dozen.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "evaluation" / "data" / "sample.jsonl"
TABLES = Path(__file__).resolve().with_name("sample_tables.json")
SEED = 20240611

OPERATIONS: dict[str, Callable[[int, int], int]] = {
    "plus": lambda a, b: a + b,
    "minus": lambda a, b: a - b,
    "times": lambda a, b: a * b,
    "divided": lambda a, b: a // b,
}
"""The arithmetic operations, by the names the tables' `arithmetic` templates are filed under."""

ANSWERS: dict[str, Callable[[int, int, int], int]] = {
    "a + b": lambda a, b, c: a + b,
    "a - b": lambda a, b, c: a - b,
    "a * b": lambda a, b, c: a * b,
    "a // b": lambda a, b, c: a // b,
    "a * b - c": lambda a, b, c: a * b - c,
    "a - b * c": lambda a, b, c: a - b * c,
}
"""The word problems' `answer` formulas, computed here so that no gold is typed."""


def load_tables(path: Path = TABLES) -> dict:
    """The hand-written tables of `path` (scripts/sample_tables.json), number words keyed by int."""
    tables = json.loads(path.read_text(encoding="utf-8"))
    tables["number_words"] = {int(n): words for n, words in tables["number_words"].items()}
    return tables


def number_aliases(n: int, words: dict[int, str]) -> list[str]:
    """Gold aliases of a whole number: digits, with thousands separator, and in `words` where known."""
    out = [str(n)]
    if n >= 1000:
        out.append(f"{n:,}")
    if n in words:
        out.append(words[n])
        if "-" in words[n]:
            out.append(words[n].replace("-", " "))
    return out


def capital_items(capitals: dict) -> list[dict]:
    """One item per country: the plain question, then three of the templates in turn."""
    templates = capitals["templates"]
    items = []
    for index, (country, capital) in enumerate(capitals["countries"]):
        pick = [templates[(index + j * 2) % len(templates)] for j in range(3)]
        possessive = country + ("'" if country.endswith("s") else "'s")
        variants = [f"What is the capital of {country}?"] + [t.format(c=country, p=possessive) for t in pick]
        items.append(_item("capitals", "factual", capital, variants))
    return items


def arithmetic_items(rng: random.Random, tables: dict) -> list[dict]:
    """Bare arithmetic (8 per operation) and word problems (3 each), operands drawn from `rng`."""
    words = tables["number_words"]
    items = []
    for op, templates in tables["arithmetic"].items():
        fn = OPERATIONS[op]
        for index in range(8):
            if op == "plus":
                a, b = rng.randint(2, 60), rng.randint(2, 40)
            elif op == "minus":
                a = rng.randint(10, 90)
                b = rng.randint(1, a - 1)
            elif op == "times":
                a, b = rng.randint(2, 12), rng.randint(2, 12)
            else:
                b = rng.randint(2, 10)
                a = b * rng.randint(2, 12)
            value = fn(a, b)
            assert value > 0 and (op != "divided" or a % b == 0)
            pick = [templates[(index + j) % (len(templates) - 1) + 1] for j in range(3)]
            variants = [t.format(a=a, b=b) for t in [templates[0], *pick]]
            items.append(_item("arithmetic", "math", [str(value)], variants, {"operation": op, "a": a, "b": b}))
    for problem in tables["word_problems"]:
        op, answer, templates = problem["operation"], problem["answer"], problem["wordings"]
        for _ in range(3):
            if op == "plus":
                a, b, c = rng.randint(3, 40), rng.randint(2, 30), 0
            elif op == "minus":
                a = rng.randint(12, 60)
                b, c = rng.randint(2, a - 2), 0
            elif op == "times":
                a, b, c = rng.randint(3, 15), rng.randint(2, 9), 0
            elif op == "divided":
                b = rng.randint(2, 8)
                a, c = b * rng.randint(2, 9), 0
            elif answer == "a - b * c":  # a must exceed b * c
                b, c = rng.randint(5, 20), rng.randint(2, 5)
                a = b * c + rng.randint(10, 120)
            else:
                a, b = rng.randint(2, 6), rng.randint(4, 10)
                c = rng.randint(1, min(9, a * b - 1))
            value = ANSWERS[answer](a, b, c)
            assert value > 0, (templates[0], a, b, c)
            variants = [t.format(a=a, b=b, c=c) for t in templates]
            items.append(
                _item(
                    "word problems",
                    "math",
                    number_aliases(value, words),
                    variants,
                    {"operation": op, "a": a, "b": b, "c": c},
                )
            )
    return items


def conversion_items(rng: random.Random, tables: dict) -> list[dict]:
    """Two items per unit pair (three for the dozen), amounts drawn from `rng`."""
    conversions = tables["conversions"]
    templates, dozen_templates = conversions["templates"], conversions["dozen_templates"]
    items = []
    for index, (frm, to, factor) in enumerate(conversions["units"]):
        for j in range(2 if frm != "dozen" else 3):
            a = rng.randint(2, 9) if factor >= 100 else rng.randint(2, 15)
            value = a * factor
            if frm == "dozen":
                variants = [t.format(a=a) for t in dozen_templates]
            else:
                pick = [templates[(index + j + k) % 4 + 1] for k in range(3)]
                variants = [t.format(a=a, frm=frm, to=to) for t in [templates[0], *pick]]
                variants = [v[0].upper() + v[1:] for v in variants]
            items.append(
                _item(
                    "unit conversions",
                    "math",
                    number_aliases(value, tables["number_words"]),
                    variants,
                    {"from": frm, "to": to, "amount": a, "factor": factor},
                )
            )
    return items


# ----------------------------------------------------------------------------------------


def _item(category: str, kind: str, gold: list[str], variants: list[str], meta: dict | None = None) -> dict:
    assert len(variants) == 4 and len(set(variants)) == 4, variants
    return {
        "category": category,
        "kind": kind,
        "gold": gold,
        "variants": [{"id": i, "question": q} for i, q in enumerate(variants)],
        "meta": meta or {},
    }


def build(tables: dict | None = None) -> list[dict]:
    """All items, with stable ids `<category>-<nnn>`; `tables` defaults to scripts/sample_tables.json."""
    tables = tables or load_tables()
    rng = random.Random(SEED)
    items = capital_items(tables["capitals"])
    for category, facts in tables["facts"].items():
        items += [_item(category, "factual", fact["gold"], fact["wordings"]) for fact in facts]
    words = tables["number_words"]
    items += [_item("how many", "factual", number_aliases(c["number"], words), c["wordings"]) for c in tables["counts"]]
    items += arithmetic_items(rng, tables)
    items += conversion_items(rng, tables)
    counters: dict[str, int] = {}
    out = []
    seen_questions: set[str] = set()
    for item in items:
        slug = item["category"].replace(" ", "-")
        counters[slug] = counters.get(slug, 0) + 1
        original = item["variants"][0]["question"]
        assert original not in seen_questions, original
        seen_questions.add(original)
        out.append({"id": f"{slug}-{counters[slug]:03d}", **item})
    return out


def render(items: list[dict]) -> str:
    return "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items)


def main(argv: list[str]) -> int:
    text = render(build())
    if "--check" in argv:
        if not OUT.exists() or OUT.read_text(encoding="utf-8") != text:
            print(f"{OUT} is out of date: run python scripts/make_sample.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {len(text.splitlines())} items to {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
