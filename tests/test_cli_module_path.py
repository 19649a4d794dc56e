"""`python -m selfpara` imports selfpara's own packages, not same-named folders of the
directory it is run from (a user's `evaluation/`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_a_users_evaluation_folder_does_not_shadow_selfpara_evaluation(tmp_path: Path) -> None:
    own = tmp_path / "evaluation"
    own.mkdir()
    (own / "__init__.py").write_text('raise RuntimeError("the user\'s own evaluation package")\n')
    run_dir = tmp_path / "not-a-run"
    run_dir.mkdir()
    environ = {**os.environ, "PYTHONPATH": str(ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    # `report` imports the evaluation package; from tmp_path, `python -m` would find the user's first.
    proc = subprocess.run(
        [sys.executable, "-m", "selfpara", "report", str(run_dir)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=environ,
    )
    assert "the user's own evaluation package" not in proc.stderr, proc.stderr
    assert proc.returncode == 1 and "not a run directory" in proc.stderr  # selfpara's evaluation answered
    # ... while the user's package is still what plain Python finds there.
    probe = subprocess.run(
        [sys.executable, "-c", "import evaluation"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env=environ,
    )
    assert "the user's own evaluation package" in probe.stderr
