"""MkDocs hooks of the documentation site (mkdocs.yml ``hooks``).

- ``<!-- options: NAME -->`` in a page becomes the table of strategy NAME's options, read from
  its pydantic ``Config`` (name, default, description), so the options are written once, in
  the code.
- The docstrings use Sphinx roles (``:class:`~contextfold.core.view.View```); in the reference
  pages they become plain code names (``View``).
"""

from __future__ import annotations

import re
from typing import Any

from contextfold.strategies.registry import strategy_class

_OPTIONS = re.compile(r"<!-- options: ([\w.:-]+) -->")
_ROLE = re.compile(r":(?:class|meth|func|mod|data|attr|exc|obj):<code>(~?)([^<]+)</code>")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def options_table(name: str) -> str:
    """Markdown table of a strategy's options (every field of its Config but ``type``)."""
    config = strategy_class(name).Config
    rows = ["| option | default | what it does |", "|---|---|---|"]
    for field, info in config.model_fields.items():
        if field == "type":
            continue
        default = "none" if info.default is None else repr(info.default)
        if isinstance(info.default, bool):
            default = str(info.default).lower()
        rows.append(f"| `{field}` | `{_cell(default)}` | {_cell(info.description or '')} |")
    return "\n".join(rows) if len(rows) > 2 else "It has no options."


def on_page_markdown(markdown: str, **_: Any) -> str:
    return _OPTIONS.sub(lambda m: options_table(m.group(1)), markdown)


def _short(match: re.Match[str]) -> str:
    tilde, target = match.groups()
    name = target.rsplit(".", 1)[-1] if tilde else target
    return f"<code>{name}</code>"


def on_page_content(html: str, **_: Any) -> str:
    return _ROLE.sub(_short, html)
