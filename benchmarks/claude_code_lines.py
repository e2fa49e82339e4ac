"""What the Claude Code importer made of every line of a set of logs, by kind of line.

    PYTHONPATH=src .venv/bin/python benchmarks/claude_code_lines.py [PATH ...]

PATH defaults to ../shared/data/claude-code-dev. Each line is one of: ``read`` (its content is
in a trajectory: a message on the conversation's path, a reply's block or a call's result
wherever its line is, an attachment that showed the model something), ``empty`` (read, but it
holds nothing the model was shown: a system line on the path, an attachment with no text),
``left`` (off the conversation's path and not needed by it: a retried reply, a hook's report,
a result whose call was retried), ``skipped`` (Claude Code's bookkeeping, no model context)
and ``broken`` (not one JSON object). Lines in files no Claude Code format claims are not
counted (listed at the end).
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from contextfold.importers.claude_code import FORMAT
from contextfold.importers.claude_code.conversation import conversation
from contextfold.importers.claude_code.lines import CHAINED, Line, parse_lines
from contextfold.importers.claude_code.session import attachment_text
from contextfold.importers.claude_code.threads import Thread, threads
from contextfold.importers.probe import Probe
from contextfold.importers.walk import discover

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "claude-code-dev"
STATES = ("read", "empty", "left", "skipped", "broken")


def account(thread: Thread) -> dict[int, str]:
    """The state of each line of one conversation, by line number."""
    conv = conversation(thread)
    on_path = {line.number for line in thread.path}
    used = {line.number for reply in conv.replies for line in reply.lines}
    placed = {b.get("tool_use_id") for m in conv.messages for b in _dicts(m["content"])}
    out = {}
    for line in thread.lines:
        results = _results(line)
        if line.number in used or (results and results <= placed):
            out[line.number] = "read"
        elif results or line.number not in on_path:
            out[line.number] = "left"
        elif line.kind == "system" or (line.kind == "attachment" and not _shown(line)):
            out[line.number] = "empty"
        else:
            out[line.number] = "read"
    return out


def _results(line: Line) -> set[object]:
    """The calls a user line of results only answers (empty for any other line)."""
    blocks = _dicts(line.message.get("content"))
    results = {b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"}
    return results if line.kind == "user" and len(results) == len(blocks) else set()


def _shown(line: Line) -> bool:
    return bool(attachment_text(line.data))


def _dicts(content: object) -> list[dict[str, object]]:
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def main(paths: list[str]) -> None:
    table: Counter[tuple[str, str]] = Counter()
    files, others = 0, []
    for path, explicit in discover(paths or [str(DATA)]):
        probe = Probe(path, explicit=explicit)
        if not FORMAT.claims(probe):
            others.append(str(path))
            continue
        files += 1
        lines = parse_lines(probe.name, probe.lines())
        states: dict[int, str] = {}
        for thread in threads(lines.chained):
            states.update(account(thread))
        for kind, count in lines.counts.items():
            if kind == "broken":
                table[(kind, "broken")] += count
            elif kind not in CHAINED:
                table[(kind, "skipped")] += count
        for line in lines.chained:
            table[(line.kind, states.get(line.number, "left"))] += 1
    print(f"{files} files")
    print(f"{'kind of line':24}" + "".join(f"{s:>9}" for s in STATES))
    for kind in sorted({k for k, _ in table}):
        print(f"{kind:24}" + "".join(f"{table[(kind, s)]:>9,}" for s in STATES))
    for other in others:
        print(f"not a Claude Code log: {other}")


if __name__ == "__main__":
    main(sys.argv[1:])
