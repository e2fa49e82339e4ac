"""The grounder: read-only checks of an external-object candidate against the workspace.

A carrier that claims a work product exists is compiled only when the workspace does not
contradict it; without a workspace (a recorded trajectory) every verdict is ``unknown``.
"""

from __future__ import annotations

import hashlib
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from contextfold.core.documents import CONTAINERS, DocumentError, document_text, is_container
from contextfold.strategies.carryon.state import Candidate, normalise_location

__all__ = ["Check", "Grounder", "Verdict", "combine"]

Verdict = Literal["supported", "contradicted", "unknown"]
NO_WORKSPACE = "no workspace"


@dataclass(frozen=True, slots=True)
class Check:
    candidate: str
    version: int
    predicate: str
    verdict: Verdict
    detail: str = ""


def combine(checks: list[Check]) -> Verdict:
    if any(c.verdict == "contradicted" for c in checks):
        return "contradicted"
    if checks and all(c.verdict == "supported" for c in checks):
        return "supported"
    return "unknown"


class Grounder:
    """Runs the checks under ``root`` (None: no workspace, every verdict unknown).

    A check (:class:`Check`) is bound to one candidate, its version and a predicate: the file
    exists, is non-empty, its content hash changed since the task began (the workspace is hashed
    when the grounder is made: when the strategy is built, or when a live run points it at the
    workspace with ``ground_in``, both before the first step), a document container opens (docx,
    xlsx, pptx; unknown when the library is not installed), a text is present (in a container, in
    the text its library reads). Each check is supported, contradicted or unknown; a candidate is
    contradicted when any check is, supported when all that apply are, unknown otherwise. With no
    workspace the reason is "no workspace"; see
    :class:`~contextfold.strategies.carryon.strategy.CarryOnConfig` for what the compiler may do
    then.
    """

    def __init__(self, root: Path | None = None) -> None:
        self.root = root.resolve() if root is not None else None
        self._initial: dict[Path, str] = self._snapshot() if self.root else {}
        # (path, content hash) -> the document's text, or why it did not open: a candidate
        # re-checked by later folds, or several at one file, open an unchanged document once
        self._opened: dict[tuple[Path, str], str | DocumentError] = {}

    def check(self, candidate: Candidate) -> list[Check]:
        """The checks that apply to an external-object candidate (none to other kinds)."""
        if candidate.type != "external_object":
            return []
        bound = (candidate.id, candidate.version)
        if self.root is None:
            return [Check(*bound, "workspace", "unknown", NO_WORKSPACE)]
        path = self._resolve(candidate.location)
        if path is None:
            return [Check(*bound, "exists", "unknown", "no location inside the workspace")]
        if not path.is_file():
            return [Check(*bound, "exists", "contradicted", f"{path} does not exist")]
        data = path.read_bytes()
        digest = _digest(data)
        checks = [Check(*bound, "exists", "supported", str(path))]
        checks.append(Check(*bound, "non_empty", "supported" if data else "contradicted"))
        changed = self._initial.get(path) != digest
        checks.append(Check(*bound, "changed", "supported" if changed else "contradicted"))
        checks += self._container(candidate, path, digest)
        if candidate.expected_text and not is_container(path):
            checks.append(_text(candidate, data.decode("utf-8", errors="replace")))
        return checks

    def _resolve(self, location: str) -> Path | None:
        where = normalise_location(location)
        if not where or self.root is None:
            return None
        path = (self.root / where.lstrip("/")).resolve() if not Path(where).is_absolute() else None
        path = path or Path(where).resolve()
        return path if path.is_relative_to(self.root) else None

    def _container(self, candidate: Candidate, path: Path, digest: str) -> list[Check]:
        """The document opens with its library (and, when a text is expected, holds it)."""
        if not is_container(path):
            return []
        bound = (candidate.id, candidate.version)
        module = CONTAINERS[path.suffix.lower()]
        if importlib.util.find_spec(module) is None:
            return [Check(*bound, "opens", "unknown", f"{module} is not installed")]
        text = self._open(path, digest)
        if isinstance(text, DocumentError):
            return [Check(*bound, "opens", "contradicted", str(text))]
        checks = [Check(*bound, "opens", "supported")]
        if candidate.expected_text:
            checks.append(_text(candidate, text))
        return checks

    def _open(self, path: Path, digest: str) -> str | DocumentError:
        key = (path, digest)
        if key not in self._opened:
            try:
                self._opened[key] = document_text(path)
            except DocumentError as exc:
                self._opened[key] = exc
        return self._opened[key]

    def _snapshot(self) -> dict[Path, str]:
        assert self.root is not None
        files = (p for p in self.root.rglob("*") if p.is_file())
        return {p.resolve(): _digest(p.read_bytes()) for p in files}


def _text(candidate: Candidate, text: str) -> Check:
    found = candidate.expected_text in text
    verdict: Verdict = "supported" if found else "contradicted"
    return Check(candidate.id, candidate.version, "text_present", verdict)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
