"""The text of office documents (docx, xlsx, pptx), read with their own libraries.

Used where a document must be opened for real: the workspace environment's ``read_file``,
its tasks' scorers and CarryOn's grounder. Each library is an optional dependency (the
``documents`` extra); a missing one raises :class:`DocumentError` saying what to install, and
so does a file its library cannot open.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from contextfold.core.errors import ContextFoldError

__all__ = ["CONTAINERS", "DocumentError", "document_text", "is_container"]

CONTAINERS = {".docx": "docx", ".xlsx": "openpyxl", ".pptx": "pptx"}
"""Document suffixes and the module that opens each."""
_PACKAGES = {"docx": "python-docx", "openpyxl": "openpyxl", "pptx": "python-pptx"}


class DocumentError(ContextFoldError):
    """A document that cannot be opened, or whose library is not installed."""


def is_container(path: Path) -> bool:
    return path.suffix.lower() in CONTAINERS


def document_text(path: Path) -> str:
    """The document's text: docx paragraphs and table cells, xlsx cells per sheet (one row a
    line, cells tab-separated), pptx text frames per slide."""
    module = CONTAINERS.get(path.suffix.lower())
    if module is None:
        raise DocumentError(f"{path.name} is not a docx, xlsx or pptx document")
    lib = _load(module)
    try:
        return {"docx": _docx, "openpyxl": _xlsx, "pptx": _pptx}[module](lib, path)
    except Exception as exc:  # whatever the library raises, the file did not open
        raise DocumentError(f"{path.name} does not open as {path.suffix}: {exc}") from exc


def _load(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        package = _PACKAGES[module]
        raise DocumentError(
            f"reading this document needs {package}: pip install 'contextfold[documents]'"
        ) from exc


def _docx(lib: Any, path: Path) -> str:
    doc = lib.Document(str(path))
    lines = [p.text for p in doc.paragraphs]
    for table in doc.tables:
        lines += ["\t".join(cell.text for cell in row.cells) for row in table.rows]
    return "\n".join(lines)


def _xlsx(lib: Any, path: Path) -> str:
    book = lib.load_workbook(str(path), read_only=True, data_only=True)
    lines = []
    for sheet in book.worksheets:
        lines.append(f"[sheet {sheet.title}]")
        for row in sheet.iter_rows(values_only=True):
            lines.append("\t".join("" if v is None else str(v) for v in row))
    book.close()
    return "\n".join(lines)


def _pptx(lib: Any, path: Path) -> str:
    deck = lib.Presentation(str(path))
    lines = []
    for number, slide in enumerate(deck.slides, start=1):
        lines.append(f"[slide {number}]")
        for shape in slide.shapes:
            if shape.has_text_frame:
                lines += [p.text for p in shape.text_frame.paragraphs if p.text]
    return "\n".join(lines)
