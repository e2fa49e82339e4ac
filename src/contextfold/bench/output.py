"""Writing results: strict JSON, and results printed rather than lost when a file fails.

The path is checked before the work (:func:`contextfold.bench.args.check_writable`); if writing
still fails at the end (disk full, the folder removed meanwhile), :func:`save_json` prints the
results on stdout instead of losing them. Non-finite floats (a NaN reward) are written as
``null``: bare ``NaN`` is not JSON.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from rich.console import Console

__all__ = ["dumps", "plural", "save_json", "to_strict_json"]


def to_strict_json(value: Any) -> Any:
    """``value`` with every non-finite float (NaN, infinity) replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: to_strict_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_strict_json(v) for v in value]
    return value


def dumps(data: Any) -> str:
    """``data`` as strict JSON text (indented; NaN and infinities as null)."""
    return json.dumps(to_strict_json(data), indent=1, allow_nan=False)


def plural(count: int, one: str, many: str | None = None) -> str:
    """``1 trajectory``, ``2 trajectories``."""
    return f"{count:,} {one if count == 1 else (many or one + 's')}"


def save_json(path: Path, data: Any, *, out: Console, err: Console) -> bool:
    """Write ``data`` to ``path`` and say so; if that fails, say why and print it on ``out``."""
    text = dumps(data)
    try:
        path.write_text(text + "\n", encoding="utf-8")
    except OSError as exc:
        err.print(
            f"[red]error:[/red] cannot write {path} ({exc.strerror or exc}); "
            "the results follow on stdout",
            soft_wrap=True,
        )
        out.out(text, highlight=False)
        return False
    out.print(f"wrote {path}", soft_wrap=True)  # a path broken across lines cannot be copied
    return True
