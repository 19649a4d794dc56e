"""scripts/make_answer_pairs.py: a new labelling round holds only pairs never labelled, and keeps old labels."""

from __future__ import annotations

import json
import runpy
import sys
from pathlib import Path
from typing import Any

import pytest

SCRIPT = Path(__file__).parents[1] / "scripts" / "make_answer_pairs.py"
ITEM = {
    "id": "capitals-052",
    "kind": "factual",
    "gold": ["Abuja"],
    "incorrect": [],
    "variants": [
        {"id": n, "question": q, "context": None} for n, q in enumerate(["What is the capital of Nigeria?"] * 3)
    ],
    "category": "capitals",
    "meta": {},
}
ANSWERS = ["The capital of Nigeria is Abuja.", "The capital city of Nigeria is Lagos.", "Abuja."]


def _run(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    run.mkdir()
    (run / "items.jsonl").write_text(json.dumps(ITEM) + "\n")
    samples = [
        {
            "item_id": ITEM["id"],
            "variant_id": n,
            "is_original": n == 0,
            "arm": "raw",
            "answer": text,
            "label": "correct",
        }
        | {"error": None, "calls": 1, "prompt_tokens": 1, "completion_tokens": 1, "cost": 0.0, "latency_s": 0.1}
        | {"cached_calls": 0, "shared_calls": 0, "details": {}}
        for n, text in enumerate(ANSWERS)
    ]
    (run / "samples.jsonl").write_text("".join(json.dumps(s) + "\n" for s in samples))
    return run


def _main(monkeypatch: pytest.MonkeyPatch, *args: str) -> None:
    monkeypatch.setattr(sys, "argv", [str(SCRIPT), *args])
    script: dict[str, Any] = runpy.run_path(str(SCRIPT))
    script["main"]()


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_new_round_leaves_out_seen_pairs_and_stamps_its_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = _run(tmp_path)
    seen = tmp_path / "seen.jsonl"
    # labelled before under another item id: the question and the texts make a pair the same one
    old = {"id": 0, "item_id": "guards-3", "question": ITEM["variants"][0]["question"], "a": ANSWERS[2]}
    seen.write_text(json.dumps(old | {"b": ANSWERS[0], "label": "same", "labelled": "design"}) + "\n")
    out = tmp_path / "new.jsonl"
    _main(monkeypatch, str(run), "--round", "final2", "--seen", str(seen), "--out", str(out))
    rows = _rows(out)
    # three answers make three pairs; the one already labelled (same question, same texts) is left out
    assert {(r["a"], r["b"]) for r in rows} == {(ANSWERS[0], ANSWERS[1]), (ANSWERS[1], ANSWERS[2])}
    assert all(r["labelled"] == "final2" and r["label"] is None for r in rows)


def test_rebuilding_keeps_labels_rounds_and_notes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = _run(tmp_path)
    out = tmp_path / "pairs.jsonl"
    _main(monkeypatch, str(run), "--round", "final2", "--out", str(out))
    rows = _rows(out)
    rows[0] |= {"label": "different", "labelled": "test", "note": "read by hand"}
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    _main(monkeypatch, str(run), "--round", "final3", "--labels", str(out), "--out", str(out))
    again = _rows(out)
    assert {k: again[0][k] for k in ("label", "labelled", "note")} == {
        "label": "different",
        "labelled": "test",
        "note": "read by hand",
    }
    assert [r["labelled"] for r in again[1:]] == ["final2", "final2"]
