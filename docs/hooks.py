"""MkDocs hooks of the documentation site (mkdocs.yml ``hooks``).

- ``<!-- options: NAME -->`` in a page becomes the table of strategy NAME's options, read from
  its pydantic ``Config`` (name, default, description), so the options are written once, in
  the code.
- ``<!-- cli: COMMAND -->`` becomes the table of a command's arguments and options (``replay``,
  ``bench sufficiency``), read from the typer app: its ``--help``, as a table, and the
  paragraphs its help closes with (its epilog).
- ``<!-- formats -->`` becomes the table of the trajectory formats replay reads, from the
  importers' registry (name, what it is, the files a folder walk takes), each name a link to
  its section of docs/measure/formats.md (the pages that use it are beside it).
- The docstrings use Sphinx roles (``:class:`~contextfold.core.view.View```); in the reference
  pages they become plain code names (``View``).
"""

from __future__ import annotations

import re
from typing import Any

from contextfold.strategies.registry import strategy_class

_OPTIONS = re.compile(r"<!-- options: ([\w.:-]+) -->")
_CLI = re.compile(r"<!-- cli: ([\w -]+?) -->")
_FORMATS = "<!-- formats -->"
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


def cli_table(name: str) -> str:
    """Markdown: a row per argument and visible option of a command, then its epilog."""
    from typer.core import TyperArgument, TyperGroup
    from typer.main import get_command

    from contextfold.cli import app

    command: Any = get_command(app)
    for part in name.split():
        if not isinstance(command, TyperGroup) or part not in command.commands:
            raise ValueError(f"<!-- cli: {name} -->: no such command")
        command = command.commands[part]
    rows = ["| argument or option | default | what it does |", "|---|---|---|"]
    for param in command.params:
        if getattr(param, "hidden", False) or param.name == "help":
            continue
        names = ", ".join(f"`{n}`" for n in (*param.opts, *param.secondary_opts))
        if isinstance(param, TyperArgument):
            names = f"`{param.metavar or param.name.upper()}`"
        rows.append(f"| {names} | {_default(param)} | {_cell(param.help or '')} |")
    epilog = [_lines(p) for p in (command.epilog or "").split("\n\n") if p]
    return "\n\n".join(["\n".join(rows), *epilog])


def _default(param: Any) -> str:
    if param.required:
        return "required"
    value = param.default
    if value is None or value == [] or param.show_default is False:
        return ""
    if isinstance(value, bool):
        return f"`{str(value).lower()}`" if not param.is_flag else ("on" if value else "off")
    if isinstance(value, list):
        return ", ".join(f"`{v}`" for v in value)
    return f"`{_cell(str(value))}`"


def formats_table() -> str:
    """Markdown table of the importers' registry, in its order of precedence."""
    from contextfold.importers.registry import FORMATS

    rows = ["| format | what it is | a folder walk takes |", "|---|---|---|"]
    for f in FORMATS:
        suffixes = ", ".join(f"`*{s}`" for s in f.suffixes)
        summary = _text(_cell(f.summary))
        rows.append(f"| [`{f.name}`](formats.md#{f.name}) | {summary} | {suffixes} |")
    return "\n".join(rows)


def _text(text: str) -> str:
    """Plain text as Markdown shows it: not markup (attr_list reads ``{...}``)."""
    for char, entity in (("<", "&lt;"), ("*", "\\*"), ("{", "&#123;"), ("}", "&#125;")):
        text = text.replace(char, entity)
    return text


def _lines(paragraph: str) -> str:
    """A paragraph of a help screen in Markdown, its line breaks kept (a list of formats)."""
    return "  \n".join(_text(line.strip()) for line in paragraph.splitlines())


def on_page_markdown(markdown: str, **_: Any) -> str:
    markdown = markdown.replace(_FORMATS, formats_table()) if _FORMATS in markdown else markdown
    markdown = _CLI.sub(lambda m: cli_table(m.group(1)), markdown)
    return _OPTIONS.sub(lambda m: options_table(m.group(1)), markdown)


def _short(match: re.Match[str]) -> str:
    tilde, target = match.groups()
    name = target.rsplit(".", 1)[-1] if tilde else target
    return f"<code>{name}</code>"


def on_page_content(html: str, **_: Any) -> str:
    return _ROLE.sub(_short, html)
