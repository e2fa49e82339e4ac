"""The generated results the docs show are the code's: the bundled samples' page regenerates
exactly (its stamp aside), and the README's results table is the one on the recorded runs'
page (``benchmarks/results.py --check``). A test that edits either copy sees the check fail."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "results.py"


def check(root: Path) -> subprocess.CompletedProcess[str]:
    script = root / "benchmarks" / "results.py"
    return subprocess.run(
        [sys.executable, str(script), "--check"], capture_output=True, text=True, timeout=120
    )


def test_the_generated_pages_match_the_code() -> None:
    run = check(ROOT)
    assert run.returncode == 0, run.stderr


def copy(tmp: Path) -> Path:
    root = tmp / "repo"
    shutil.copytree(
        ROOT / "benchmarks", root / "benchmarks", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copytree(ROOT / "docs" / "results", root / "docs" / "results")
    shutil.copy(ROOT / "README.md", root / "README.md")
    return root


def test_a_pasted_figure_fails_the_check(tmp_path: Path) -> None:
    root = copy(tmp_path)
    page = root / "docs" / "results" / "samples.md"
    page.write_text(page.read_text().replace("1.000", "0.999", 1))
    readme = root / "README.md"
    readme.write_text(readme.read_text().replace("| refold ", "| refold*", 1))
    run = check(root)
    assert run.returncode == 1
    assert "samples.md is stale" in run.stderr
    assert "README's results table" in run.stderr
