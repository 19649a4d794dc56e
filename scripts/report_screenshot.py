"""The report's first screen as a picture, for the docs: docs/results/report-first-screen.png.

It runs `selfpara bench`'s own code on the built-in sample set with a scripted fake model (so the
picture shows the layout, not a measurement: the fake answers each wording right or wrong by a
hash of its text, and does not know the answer to about two questions in five), on four arms
and fewer than 30 questions with a small self-judging model, so that the report carries the
warnings a first run of a small model does (small sample, the judge, answers not attempted). It
writes the reports, then has headless Chromium draw report.html at 1280×800 and checks two
things: that the first figure starts on that first screen (the numbers come before the
warnings' detail), and that no table of the page is wider than its column (no horizontal
scrollbar).

    python scripts/report_screenshot.py [--out RUN_DIR] [--png PATH] [--questions N]

Needs the `bench` extra and Chromium (`apt-get install chromium`); without Chromium it writes the
run and says so.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evaluation.datasets import load_dataset  # noqa: E402
from evaluation.report import write_reports  # noqa: E402
from evaluation.runner import BenchConfig, RunOptions, run_bench  # noqa: E402
from selfpara.models.client import ModelClient  # noqa: E402
from selfpara.pipeline.prompts import JUDGE_MARKER, PARAPHRASE_MARKER  # noqa: E402
from selfpara.testing import FakeBackend, default_responder, last_user_text  # noqa: E402

WRONG = "Springfield"

WIDTH, HEIGHT = 1280, 800
"""The window the first screen is drawn in (a laptop's browser)."""

MODEL = "openai/qwen2.5-1.5b-scripted"
"""A small model's name: its `auto` equivalence judges with itself, which the report warns about."""

_CHECK = """<script>
const right = document.body.getBoundingClientRect().right + 1;
const wide = [...document.querySelectorAll('table')].filter(
  t => t.scrollWidth > t.clientWidth + 1 || t.getBoundingClientRect().right > right
).map(t => t.id);
document.body.setAttribute('data-wide-tables', JSON.stringify(wide));
const figure = document.querySelector('figure');
document.body.setAttribute('data-first-figure-top', figure ? Math.round(figure.getBoundingClientRect().top) : -1);
</script></body>"""


def _hash(*parts: object) -> int:
    return int(hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[:8], 16)


def scripted_model(questions: int) -> FakeBackend:
    """A fake model over the sample set: right on a wording with a probability set per question."""
    items = load_dataset("sample")[:questions]
    tails = {" ".join(v.question.split()[-3:]).lower(): item for item in items for v in item.variants}
    talk = default_responder()

    def respond(model: str, messages: list[Any], params: dict[str, Any]) -> str:
        text = last_user_text(messages)
        lowered = text.lower()
        found = [tail for tail in tails if tail in lowered]
        if not found or PARAPHRASE_MARKER in text or JUDGE_MARKER in text:
            return str(talk(model, messages, params))
        item = tails[max(found, key=len)]
        if _hash("unknown", item.id) % 5 < 2:
            return "I don't know"  # about two questions in five: not attempted, by every arm
        skill = 45 + _hash(item.id) % 50  # per question: how often a wording of it is answered right
        right = _hash(text, params.get("seed")) % 100 < skill
        return item.gold[0] if right else WRONG

    return FakeBackend(respond)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="run directory (default: a temporary one)")
    parser.add_argument("--png", type=Path, default=ROOT / "docs" / "results" / "report-first-screen.png")
    parser.add_argument("--questions", type=int, default=24)
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="report-screenshot-")) / "run"
    config = BenchConfig(dataset="sample", model=MODEL, arms=["raw", "sc", "selfpara", "oracle"], k=3, limit=None)
    config = config.model_copy(update={"limit": args.questions, "max_variants": 4})
    client = ModelClient(backend=scripted_model(200), retries=0, timeout_s=30)
    asyncio.run(run_bench(config, out, RunOptions(client=client, progress=False, concurrency=8)))
    report = write_reports(out)
    print(f"run: {out}; efficiency: {json.dumps(report['efficiency'][:1], default=str)[:300]}")
    print(f"warnings ({len(report['warnings'])}, one per kind):", *report["warnings"], sep="\n  ")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if chromium is None:
        print("no Chromium here: the run and its reports are written, no picture taken")
        return
    page = out / "report.html"
    checked = out / "report-checked.html"
    checked.write_text(page.read_text(encoding="utf-8").replace("</body>", _CHECK), encoding="utf-8")
    flags = [
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        f"--window-size={WIDTH},{HEIGHT}",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
    ]
    dom = subprocess.run([*flags, "--dump-dom", checked.as_uri()], capture_output=True, text=True, timeout=120)
    found = re.search(r"data-wide-tables=\"([^\"]*)\"", dom.stdout)
    wide = json.loads(found.group(1).replace("&quot;", '"')) if found else None
    print(f"tables wider than the page at {WIDTH} px: {wide}")
    top = re.search(r'data-first-figure-top="(-?\d+)"', dom.stdout)
    print(f"the first figure starts at {top.group(1) if top else '?'} px of a {HEIGHT} px screen")
    args.png.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([*flags, f"--screenshot={args.png}", page.as_uri()], check=True, capture_output=True, timeout=120)
    print(f"screenshot: {args.png}")


if __name__ == "__main__":
    main()
