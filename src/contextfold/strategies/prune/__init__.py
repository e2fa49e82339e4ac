"""``prune``: filter file-read and search output by fixed rules (ReFold's B.1 baseline).

An output is pruned the same way at every render (the result depends only on the call and its
output), so the prefix stays; nothing pruned is restorable. The rules are in :mod:`.rules`.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from contextfold.core.errors import MessageFormatError
from contextfold.core.history import History
from contextfold.core.messages import AssistantMessage, ToolCall, ToolMessage
from contextfold.core.view import View
from contextfold.strategies.base import StrategyConfig
from contextfold.strategies.prune.rules import prune_read, prune_search
from contextfold.strategies.transform import Edit, TransformStrategy, rewrite, tool_stub

__all__ = ["PruneConfig", "PruneStrategy", "Target", "classify"]

SHELL_TOOLS = frozenset(
    {"bash", "shell", "sh", "terminal", "execute_bash", "run_command", "run_shell"}
)
READ_TOOLS = frozenset({"read_file", "read", "view", "view_file", "open_file", "open", "cat"})
SEARCH_TOOLS = frozenset(
    {"grep", "search", "search_files", "search_dir", "search_file", "find_files", "find"}
    | {"glob", "rg", "ripgrep"}
)
EDITOR_TOOLS = frozenset({"str_replace_editor", "str_replace_based_edit_tool", "text_editor"})
"""Editor tools whose ``command: view`` reads a file."""
_READERS = frozenset({"cat", "nl", "head", "tail", "sed"})
_SEARCHERS = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "find"})
_NEUTRAL = frozenset({"cd", "echo", "printf", "sort", "uniq", "true", "xargs"})
_BODY = re.compile(r"(<(output|output_head|output_tail)>\n?)(.*?)(</\2>)", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Target:
    """A call's output kind; for reads, the file's extension and whether it starts at line 1."""

    kind: Literal["read", "search"]
    ext: str = ""
    from_top: bool = True


class PruneConfig(StrategyConfig):
    type: Literal["prune"] = "prune"
    per_file: int = Field(5, ge=1, description="Search matches kept per file (K).")
    max_matches: int = Field(50, ge=1, description="Search matches kept in all (M).")
    import_lines: int = Field(5, ge=1, description="Longer runs of imports become one line.")


def classify(call: ToolCall) -> Target | None:
    """The kind of output ``call`` produces, or None when prune leaves it alone.

    A shell call (``bash`` and the like, with a ``command``: mini-swe-agent's replies become
    ``bash`` calls) counts when every stage of its command is a reader (``cat``, ``nl``, ``head``,
    ``tail``, ``sed -n``), a searcher (``grep``, ``rg``, ``ag``, ``git grep``, ``find``, ``xargs
    grep``) or a harmless filter (``cd``, ``echo``, ``sort``, ``uniq``), with no redirect into a
    file and no here-document: a search when a stage searches, else a file read. Tools named like
    ``read_file``/``view`` and ``grep``/``search_files`` count too. Any other output stays exactly
    as it is, and so do mini-swe-agent's ``<returncode>``/``<output>`` wrappers: only the text
    inside changes.
    """
    try:
        args = call.parsed_arguments()
    except MessageFormatError:
        return None
    args = args if isinstance(args, Mapping) else {}
    name, command = call.name.lower(), args.get("command", args.get("cmd"))
    if name in SHELL_TOOLS and isinstance(command, str):
        return _classify_command(command)
    if name in SEARCH_TOOLS:
        return Target("search")
    if name in READ_TOOLS or (name in EDITOR_TOOLS and command == "view"):
        path = next((str(args[k]) for k in ("path", "file_path", "file") if k in args), "")
        ranged = any(k in args for k in ("offset", "start_line", "view_range", "line_start"))
        return Target("read", _ext(path), not ranged)
    return None


def _classify_command(command: str) -> Target | None:
    kinds, ext, from_top = set(), "", True
    for line in command.splitlines():
        for words in _stages(line):
            kind, path = _stage_kind(words)
            if kind is None:
                return None
            kinds.add(kind)
            ext = ext or path
            from_top = from_top and words[0] not in {"sed", "tail"}
    if "search" in kinds:
        return Target("search")
    return Target("read", ext, from_top) if "read" in kinds else None


def _stages(line: str) -> list[list[str]]:
    """The words of each pipeline or list stage of one shell line; ``[["?"]]`` when it cannot
    be parsed, writes a file or feeds a here-document."""
    try:
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:
        return [["?"]]
    stages: list[list[str]] = [[]]
    for i, token in enumerate(tokens):
        if token in {"|", "||", "&&", ";", "&"}:
            stages.append([])
        elif token in {">", ">>", "<<", "<<<", "&>"} and tokens[i + 1 : i + 2] != ["/dev/null"]:
            return [["?"]]
        elif stages[-1] or not re.fullmatch(r"\w+=.*", token):  # skip VAR=value prefixes
            stages[-1].append(token)
    return [s for s in stages if s]


def _stage_kind(words: list[str]) -> tuple[str | None, str]:
    """("read" with the file's extension, "search", "neutral" or None) for one stage."""
    tool = words[0].rsplit("/", 1)[-1]
    if tool in _SEARCHERS or (tool in {"git", "xargs"} and _SEARCHERS.intersection(words[1:3])):
        return "search", ""
    if tool == "sed" and ("-n" not in words or any(w.startswith(("-i", "--in")) for w in words)):
        return None, ""
    if tool in _READERS:
        return "read", next((e for w in words[1:] if (e := _ext(w)) and w[0] != "-"), "")
    return ("neutral", "") if tool in _NEUTRAL else (None, "")


def _ext(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[-1].lower() if "." in name.strip(".") else ""


def _map_bodies(text: str, prune: Callable[[str, bool], str | None]) -> str | None:
    """``prune(body, at_head)`` inside mini-swe-agent's output tags (or on the whole text)."""
    if not _BODY.search(text):
        return prune(text, True)
    changed = False

    def one(m: re.Match[str]) -> str:
        nonlocal changed
        new = prune(m.group(3), m.group(2) != "output_tail")
        changed = changed or new is not None
        return m.group(1) + (m.group(3) if new is None else new) + m.group(4)

    out = _BODY.sub(one, text)
    return out if changed else None


class PruneStrategy(TransformStrategy):
    """Filters file-read and search output by fixed rules (blank, comment, license lines).

    The rules are in the module docstring."""

    Config = PruneConfig

    def __init__(self, config: PruneConfig | None = None) -> None:
        super().__init__()
        self.config = config or PruneConfig()
        self.name = "prune"
        self._edits: dict[tuple[ToolCall, ToolMessage], Edit | None] = {}
        self._history: History | None = None

    def apply(self, view: View, history: History, budget: int | None) -> View:
        if history is not self._history:  # the cache holds one session's outputs
            self._history, self._edits = history, {}
        calls: dict[str, ToolCall] = {}
        edits = {}
        for pos, msg in enumerate(view.messages):
            if isinstance(msg, AssistantMessage):
                calls = {c.id: c for c in msg.tool_calls}
            elif isinstance(msg, ToolMessage) and msg.tool_call_id in calls:
                key = (calls[msg.tool_call_id], msg)
                if key not in self._edits:  # renders repeat outputs: prune each once
                    text = self.prune(*key)
                    edit = None if text is None else Edit(tool_stub(msg, text), "prune", None)
                    self._edits[key] = edit
                if (edit := self._edits[key]) is not None:
                    edits[pos] = edit
        return rewrite(view, edits, history, strategy=self.name)

    def prune(self, call: ToolCall, output: ToolMessage | str) -> str | None:
        """The output of ``call`` with the rules applied; None when they change nothing."""
        text = output.content if isinstance(output, ToolMessage) else output
        target = classify(call)
        if target is None:
            return None
        cfg = self.config
        if target.kind == "search":
            return _map_bodies(
                text,
                lambda body, _: prune_search(
                    body, per_file=cfg.per_file, max_matches=cfg.max_matches
                ),
            )
        return _map_bodies(
            text,
            lambda body, head: prune_read(
                body,
                ext=target.ext,
                from_top=head and target.from_top,
                import_lines=cfg.import_lines,
            ),
        )
