"""scripts/label_answer_pairs.py: pairs are labelled from what their answers state, and a mismatch stops it."""

from __future__ import annotations

import json
import runpy
import sys
from pathlib import Path
from typing import Any

import pytest

SCRIPT = Path(__file__).parents[1] / "scripts" / "label_answer_pairs.py"
Q = "What is the capital of Nigeria?"
A, B, C = "The capital of Nigeria is Abuja.", "Abuja.", "The capital city of Nigeria is Lagos."
PAIRS = [(A, B), (A, C), (B, C)]


def _files(tmp_path: Path, stated: list[str], notes: dict[str, str] | None = None) -> tuple[Path, Path]:
    pairs = tmp_path / "pairs.jsonl"
    rows = [{"id": i, "item_id": "capitals-052", "question": Q, "a": a, "b": b} for i, (a, b) in enumerate(PAIRS)]
    pairs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    spec = tmp_path / "stated.json"
    spec.write_text(json.dumps({"stated": {"capitals-052": stated}, "notes": notes or {}}))
    return pairs, spec


def _main(monkeypatch: pytest.MonkeyPatch, *args: str) -> None:
    monkeypatch.setattr(sys, "argv", [str(SCRIPT), *args])
    script: dict[str, Any] = runpy.run_path(str(SCRIPT))
    script["main"]()


def test_a_pair_is_same_when_both_answers_state_one_thing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pairs, spec = _files(tmp_path, ["Abuja", "Abuja", "Lagos"], {"capitals-052/1": "a bare name: same"})
    _main(monkeypatch, str(pairs), str(spec))
    rows = [json.loads(line) for line in pairs.read_text().splitlines()]
    assert [r["label"] for r in rows] == ["same", "different", "different"]
    assert rows[0]["note"] == "a bare name: same" and rows[2]["note"] == "a bare name: same"
    assert "note" not in rows[1]


def test_a_stated_list_that_does_not_fit_the_answers_stops(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pairs, spec = _files(tmp_path, ["Abuja", "Abuja"])
    before = pairs.read_text()
    with pytest.raises(SystemExit, match="3 distinct answers, 2 stated"):
        _main(monkeypatch, str(pairs), str(spec))
    assert pairs.read_text() == before
