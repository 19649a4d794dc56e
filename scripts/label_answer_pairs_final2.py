"""The hand labels of the `final2` round of answer pairs (benchmarks/data/answer_pairs_final2.jsonl).

Label rule: every distinct answer of each item was read by hand and what it answers was written
down below (STATED, in the order the answers first appear in the pairs file); a pair is `same`
when its two answers state the same thing, whatever else they say, and `different` otherwise
(another answer, or none). Judgement calls are in NOTES, copied onto their pairs. Written and
run before any equivalence function was scored on these pairs.

    python scripts/make_answer_pairs.py runs/natural-held50 --round final2 \\
        --seen benchmarks/data/answer_pairs.jsonl --out benchmarks/data/answer_pairs_final2.jsonl
    python scripts/label_answer_pairs_final2.py
"""

from __future__ import annotations

import json
from pathlib import Path

PATH = Path(__file__).parent.parent / "benchmarks" / "data" / "answer_pairs_final2.jsonl"
# What every distinct answer of an item states, in order of first appearance in the pairs file.
STATED = {
    "capitals-004": ["Madrid"] * 3,
    "capitals-005": ["Lisbon"] * 2,
    "capitals-011": ["Prague"] * 4,
    "capitals-016": ["Copenhagen"] * 5,
    "capitals-017": ["Helsinki"] * 2,
    "capitals-031": ["Seoul"] * 3,
    "capitals-040": ["Kabul"] * 2,
    "capitals-052": ["Abuja", "Lagos"],
    "capitals-053": ["Accra"] * 4,
    "capitals-054": ["Rabat"] * 2,
    "capitals-064": ["Kingston"] * 3,
    "capitals-066": ["Brasilia"] * 2,
    "capitals-067": ["Santiago"] * 3,
    "capitals-069": ["Bogota"] * 3,
    "geography-011": ["Danube"] * 10,
    "geography-019": ["Tanzania"] * 7,
    "geography-028": ["rupee"] * 9,
    "geography-029": ["Australia"] * 12,
    "geography-034": ["Europe"] * 9,
    "geography-037": ["South America"] * 8,
    "geography-038": ["Asia"] * 8,
    "science-001": ["Au"] * 7,
    "science-006": ["Pb"] * 5,
    "science-009": ["Mars"] * 3,
    "science-018": ["0"] * 2,
}
NOTES = {
    (
        "geography-038",
        6,
    ): "'belongs to the Southeast Asian country of Vietnam' names no continent but places it in Asia: same",
    ("geography-038", 2): "'the Southeast Asian continent' is no continent, but says Asia: same",
    ("geography-034", 8): "'Central Europe' with wrong seas (Adriatic, North Sea) still answers Europe: same",
    ("science-001", 3): "the opening 'Yes, that is correct.' answers no question asked, the rest states Au: same",
    ("capitals-064", 1): "a bare name against sentences: same",
}


def main() -> None:
    rows = [json.loads(line) for line in PATH.read_text().splitlines()]
    order: dict[str, list[str]] = {}
    for r in rows:
        seen = order.setdefault(r["item_id"], [])
        for t in (r["a"], r["b"]):
            if t not in seen:
                seen.append(t)
    for item, texts in order.items():
        assert len(texts) == len(STATED[item]), (item, len(texts))
    for r in rows:
        texts = order[r["item_id"]]
        ia, ib = texts.index(r["a"]), texts.index(r["b"])
        r["label"] = "same" if STATED[r["item_id"]][ia] == STATED[r["item_id"]][ib] else "different"
        notes = [NOTES[(r["item_id"], i)] for i in (ia, ib) if (r["item_id"], i) in NOTES]
        if notes:
            r["note"] = "; ".join(notes)
    PATH.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    print(sum(r["label"] == "same" for r in rows), "same,", sum(r["label"] == "different" for r in rows), "different")


if __name__ == "__main__":
    main()
