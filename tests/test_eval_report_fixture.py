"""`selfpara report` on a recorded run gives the report it gave when the run was recorded.

The fixture is five questions of a real bench run (runs/gsm8k-held24: Qwen2.5-Coder-1.5B on
held-out GSM8K, arms raw and oracle), its config's item and variant counts set to the five, its
setting and flag names moved to today's (low_vote_share for low_agreement; the removed settings
dropped). The expected report.md and report.json were rendered from it before the move of the
code into folders by stage, and differed from the original recording only in those names. A change to the
report, the metrics or what they read shows here as a diff; when it is meant, render the
expected files again (see REGENERATE).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from selfpara.cli import app as cli_app

FIXTURES = Path(__file__).parent / "fixtures"
RUN = FIXTURES / "run_gsm8k_held5"
EXPECTED = FIXTURES / "run_gsm8k_held5.expected"
GENERATED = re.compile(r'(Generated |"generated": ")\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00')
REGENERATE = """the expected files, again: cp -r tests/fixtures/run_gsm8k_held5 /tmp/r/runs/ && cd /tmp/r &&
selfpara report runs/run_gsm8k_held5, then copy its report.md and report.json into
tests/fixtures/run_gsm8k_held5.expected/ with the timestamp replaced by GENERATED"""


@pytest.mark.extra("bench")
def test_the_report_of_a_recorded_run_is_unchanged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    shutil.copytree(RUN, tmp_path / "runs" / RUN.name)  # the report names the run by the path it is given
    result = CliRunner().invoke(cli_app, ["report", f"runs/{RUN.name}"])
    assert result.exit_code == 0, result.output
    for name in ("report.md", "report.json"):
        written = (tmp_path / "runs" / RUN.name / name).read_text(encoding="utf-8")
        assert GENERATED.search(written), name  # the one line that differs by when it was rendered
        got = GENERATED.sub(r"\1GENERATED", written)
        assert got == (EXPECTED / name).read_text(encoding="utf-8"), f"{name} changed; if meant, {REGENERATE}"
    assert not (RUN / "report.md").exists()  # the fixture itself is never written
