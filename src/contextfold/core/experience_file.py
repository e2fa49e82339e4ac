"""Experiences in a file: what ``replay --save-experience`` writes and ``--experience`` reads.

One JSON object, a key per strategy label (``"refold"``, ``"carryon gate=none"``), each the
counts of :class:`~contextfold.core.experience.Experience` (``lengths``, ``hits``,
``exposed``, ``asked``, ``committed``). A file that is not such an object is a
:class:`~contextfold.core.errors.ConfigError` naming the file and the problem.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from contextfold.core.errors import ConfigError
from contextfold.core.experience import Experience

__all__ = ["load_experiences", "save_entry", "save_experiences"]


class _Counts(BaseModel):
    model_config = ConfigDict(extra="forbid")

    lengths: list[int] = Field(default_factory=list)
    hits: int = Field(0, ge=0)
    exposed: int = Field(0, ge=0)
    asked: int = Field(0, ge=0)
    committed: int = Field(0, ge=0)


def save_experiences(path: Path, experiences: Mapping[str, Experience]) -> None:
    """Write each label's counts to ``path`` (JSON)."""
    data = {label: e.counts() for label, e in experiences.items()}
    path.write_text(json.dumps(data, indent=1) + "\n")


def save_entry(path: Path, label: str, experience: Experience) -> None:
    """Write ``label``'s counts to ``path``, keeping the other labels the file holds. The file
    is replaced whole (written beside it, then renamed), so a reader or a crash never sees it
    half written."""
    known = load_experiences(path) if path.exists() else {}
    known[label] = experience
    part = path.with_name(f".{path.name}.part")
    save_experiences(part, known)
    os.replace(part, path)


def load_experiences(path: Path, *, frozen: bool = True) -> dict[str, Experience]:
    """Each label's experience from ``path``; ``frozen`` (the default): recording nothing."""
    try:
        data = json.loads(path.read_text())
    except OSError as exc:
        raise ConfigError(f"cannot read the experience file {path}: {exc.strerror}") from exc
    except json.JSONDecodeError as exc:
        raise ConfigError(f"experience file {path} is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"experience file {path}: expected an object of strategy labels")
    out: dict[str, Experience] = {}
    for label, counts in data.items():
        try:
            c = _Counts.model_validate(counts)
        except ValidationError as exc:
            raise ConfigError(f"experience file {path}, {label!r}: {exc}") from exc
        out[label] = Experience(c.lengths, c.hits, c.exposed, c.asked, c.committed, frozen)
    return out
