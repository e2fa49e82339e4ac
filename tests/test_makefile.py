"""The Makefile: every target it declares phony exists (``make bench`` was declared, never
defined)."""

from __future__ import annotations

import re
from pathlib import Path

MAKEFILE = Path(__file__).resolve().parents[1] / "Makefile"


def test_every_phony_target_has_a_rule() -> None:
    text = MAKEFILE.read_text()
    phony = {name for line in re.findall(r"^\.PHONY:(.*)$", text, re.M) for name in line.split()}
    rules = set(re.findall(r"^([A-Za-z][\w-]*):(?!=)", text, re.M))
    assert phony, "no .PHONY line"
    assert phony <= rules, f"declared phony with no rule: {sorted(phony - rules)}"
