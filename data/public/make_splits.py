"""Build the development and held-out splits of the public question sets, once, before any answer.

    python data/public/make_splits.py NQ-open.dev.jsonl comqa_train.json

Reads the files as distributed (see README.md for where they come from) and writes, in the same
formats, `nq-open/dev.jsonl`, `nq-open/held.jsonl`, `nq-open/held-2.jsonl`, `comqa/dev.json`,
`comqa/held.json` and `comqa/held-2.json` to `comqa/held-5.json` beside this script. The seed and sizes below
are the protocol: changing them makes new splits, which are new sets.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

SEED = 4747
NQ_DEV, NQ_HELD = 200, 400
NQ_HELD_2 = 200
"""A second held-out half, the next questions of the same seeded order, cut on 2026-12-05 (before any model
answered them) when the first had been answered: the vote budget's check (docs/results/public-sets.md)."""
COMQA_MIN_WORDINGS = 3
COMQA_DEV, COMQA_HELD = 120, 200
COMQA_HELD_2 = 100
"""A second ComQA held-out set, the next clusters of the same seeded order, cut on 2026-12-05 (before any model
answered them) when the first and its rest had been answered: the hearing of the vote's own answers, once more."""
COMQA_HELD_3 = 100
"""A third, the next clusters again, cut on 2026-12-05 (before any model answered them) when the second had been
answered and its pairs had become development: the hearing after the fixes found on them."""
COMQA_HELD_4 = 100
"""A fourth, the next clusters again, cut on 2026-12-05 (before any model answered them) when the third's pairs had
been labelled and read: the hearing after the fixes found on the third."""
COMQA_HELD_5 = 100
"""A fifth, the next clusters again, cut on 2026-12-05 (before any model answered them) when the fourth had been
answered with no hearing error on too few pairs to show the targets: the same code once more, on more pairs."""

HERE = Path(__file__).parent


def split(rows: list, *sizes: int) -> list[list]:
    """`rows` shuffled with SEED and cut into consecutive parts of `sizes`."""
    order = list(range(len(rows)))
    random.Random(SEED).shuffle(order)
    parts, start = [], 0
    for size in sizes:
        parts.append([rows[i] for i in order[start : start + size]])
        start += size
    return parts


def main(nq_path: str, comqa_path: str) -> None:
    nq = [json.loads(line) for line in Path(nq_path).read_text(encoding="utf-8").splitlines() if line.strip()]
    nq_dev, nq_held, nq_held_2 = split(nq, NQ_DEV, NQ_HELD, NQ_HELD_2)
    (HERE / "nq-open").mkdir(exist_ok=True)
    for name, rows in (("dev", nq_dev), ("held", nq_held), ("held-2", nq_held_2)):
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        (HERE / "nq-open" / f"{name}.jsonl").write_text(text, encoding="utf-8")
    clusters = json.loads(Path(comqa_path).read_text(encoding="utf-8"))
    multi = [c for c in clusters if len(c["questions"]) >= COMQA_MIN_WORDINGS]
    c_dev, c_held, c_held_2, c_held_3, c_held_4, c_held_5 = split(
        multi, COMQA_DEV, COMQA_HELD, COMQA_HELD_2, COMQA_HELD_3, COMQA_HELD_4, COMQA_HELD_5
    )
    (HERE / "comqa").mkdir(exist_ok=True)
    for name, rows in (
        ("dev", c_dev),
        ("held", c_held),
        ("held-2", c_held_2),
        ("held-3", c_held_3),
        ("held-4", c_held_4),
        ("held-5", c_held_5),
    ):
        (HERE / "comqa" / f"{name}.json").write_text(json.dumps(rows, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"NQ-open: {len(nq)} questions -> dev {len(nq_dev)}, held {len(nq_held)}, held-2 {len(nq_held_2)}")
    print(f"ComQA: {len(clusters)} clusters, {len(multi)} with >= {COMQA_MIN_WORDINGS} wordings")
    helds = ", ".join(
        f"held-{n} {len(rows)}" for n, rows in ((2, c_held_2), (3, c_held_3), (4, c_held_4), (5, c_held_5))
    )
    print(f"  -> dev {len(c_dev)}, held {len(c_held)}, {helds}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
