"""Checks of command-line arguments, made before any work starts.

A result path that cannot be written, or a blank strategy spec, is reported while nothing has
run yet, instead of as a traceback after a long replay or a live run.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from contextfold.core.errors import ConfigError

__all__ = ["check_specs", "check_writable"]


def check_writable(path: Path | None, *, option: str = "--json") -> None:
    """Raise :class:`ConfigError` unless ``path`` can be written; leaves no file behind."""
    if path is None:
        return
    if path.is_dir():
        raise ConfigError(f"{option} {path} is a directory; give a file path")
    existed = path.exists()
    try:
        with path.open("a", encoding="utf-8"):
            pass
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ConfigError(
            f"{option} {path} cannot be written ({reason}); give a writable path "
            "(nothing has run yet)"
        ) from exc
    if not existed:
        path.unlink(missing_ok=True)


def check_specs(specs: Sequence[str]) -> None:
    """Raise :class:`ConfigError` for a blank strategy spec (``-s ""``)."""
    if any(not spec.strip() for spec in specs):
        raise ConfigError(
            "--strategy/-s got an empty spec; give a strategy name such as 'full' or "
            "'mask keep=5' (`contextfold strategies` lists them)"
        )
