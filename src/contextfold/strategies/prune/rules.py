"""The text rules of ``prune``: what stays of a file read (:func:`prune_read`) and of a search
output (:func:`prune_search`), every drop counted in the text.
"""

from __future__ import annotations

import re

__all__ = ["HASH_LANGS", "SLASH_LANGS", "prune_read", "prune_search"]

HASH_LANGS = frozenset(
    {"py", "pyi", "pyx", "sh", "bash", "rb", "pl", "r", "yaml", "yml", "toml", "cfg", "ini"}
)
"""Extensions whose comments start with ``#``."""
SLASH_LANGS = frozenset(
    {"c", "h", "cc", "cpp", "hpp", "cxx", "java", "js", "jsx", "ts", "tsx", "go", "rs", "cs"}
    | {"kt", "swift", "scala"}
)
"""Extensions whose comments start with ``//`` or sit in ``/* */`` blocks."""
_NUMBERED = re.compile(r"^(\s*\d+(?:\t|→|\||: ?))(.*)$")
_LICENSE = re.compile(r"licen[sc]e|copyright|spdx|all rights reserved", re.IGNORECASE)
_IMPORT = re.compile(r"^\s*(?:import\s+(\S.*)|from\s+(\S+)\s+import\b.*)$")
_COMMENT = re.compile(r"^\s*(#|//|\*|/\*)")
_BLOCKS = (('"""', '"""'), ("'''", "'''"), ("/*", "*/"), ("<!--", "-->"))
_FILE_LINE = re.compile(
    r"^(?:(?P<path>[^\s:][^:\n]*?)[:-]\d+[:-]|\d+[:-]|(?P<file>[^\s:]*[./][^\s:]*):)"
)


def prune_read(body: str, *, ext: str, from_top: bool, import_lines: int = 5) -> str | None:
    """A file read with the rules applied; None when nothing changes. ``ext`` is the file's
    extension; ``from_top`` whether an unnumbered read starts at the file's first line.

    Numbered listings (``nl -ba``, ``cat -n``) keep their numbers.

    - blank lines go;
    - comment-only lines go where the file's extension tells the syntax (``#``: Python, shell,
      YAML, TOML, ...; ``//`` and ``/* */`` blocks: C, C++, Java, JavaScript, Go, Rust, ...); with
      an unknown extension no line counts as a comment;
    - at the top of a file (an unnumbered read from line 1, or a listing numbered from 1), the
      leading comment blocks and docstrings that mention a license or copyright go;
    - a run of more than ``import_lines`` import lines (``import x``, ``from x import y``, with
      their parenthesized or backslashed continuations) becomes one line naming the modules;
    - a last line counts what went: ``[prune: 12 blank, 3 comment lines dropped; 8 import lines
      collapsed]``.
    """
    lines, end = body.splitlines(), "\n" if body.endswith("\n") else ""
    prefixes, codes, first = _numbering(lines)
    from_top = from_top if first is None else first == 1
    header = _license_header(codes) if from_top else set()
    counts = {"blank": 0, "comment": 0, "license-header": 0}
    keep = []
    for i, kind in enumerate(_line_kinds(codes, ext)):
        kind = "license-header" if i in header else kind
        if kind is None:
            keep.append(i)
        else:
            counts[kind] += 1
    out, collapsed = _collapse_imports(keep, prefixes, codes, import_lines)
    dropped = ", ".join(f"{n} {kind}" for kind, n in counts.items() if n)
    notes = [f"{dropped} lines dropped"] if dropped else []
    notes += [f"{collapsed} import lines collapsed"] if collapsed else []
    return "\n".join([*out, f"[prune: {'; '.join(notes)}]"]) + end if notes else None


def _numbering(lines: list[str]) -> tuple[list[str], list[str], int | None]:
    """Number prefixes and code of a numbered listing, and its first number; empty prefixes
    and None when the output is not numbered."""
    parts = [_NUMBERED.match(line) for line in lines]
    if not lines or sum(p is not None for p in parts) < 0.9 * len(lines):
        return [""] * len(lines), lines, None
    prefixes = [p.group(1) if p else "" for p in parts]
    codes = [p.group(2) if p else line for p, line in zip(parts, lines, strict=True)]
    first = next(p for p in parts if p)
    return prefixes, codes, int(re.sub(r"\D", "", first.group(1)))


def _line_kinds(codes: list[str], ext: str) -> list[str | None]:
    """Per line: "blank", "comment" or None (kept), following ``/* */`` blocks."""
    kinds: list[str | None] = []
    in_block = False
    for code in codes:
        text = code.strip()
        if not text:
            kinds.append("blank")
        elif ext in SLASH_LANGS and (in_block or text.startswith(("/*", "//"))):
            if in_block or text.startswith("/*"):
                in_block = "*/" not in (text if in_block else text[2:])
            kinds.append("comment")
        else:
            kinds.append("comment" if ext in HASH_LANGS and text[0] == "#" else None)
    return kinds


def _license_header(codes: list[str]) -> set[int]:
    """Lines of the leading comment blocks and docstrings that mention a license."""
    drop: set[int] = set()
    start = 0
    while start < len(codes) and (end := _block_end(codes, start)) > start:
        if _LICENSE.search("\n".join(codes[start:end])):
            drop.update(range(start, end))
        start = end
    return drop


def _block_end(codes: list[str], start: int) -> int:
    """End (exclusive) of the comment block or docstring at ``start``; ``start`` if code."""
    text = codes[start].strip()
    for opener, closer in _BLOCKS:
        if text.startswith(opener):
            if closer in text[len(opener) :]:
                return start + 1
            ends = (i for i in range(start + 1, len(codes)) if closer in codes[i])
            return next(ends, len(codes) - 1) + 1
    end = start
    while end < len(codes) and (not codes[end].strip() or _COMMENT.match(codes[end])):
        end += 1
    return end


def _collapse_imports(
    keep: list[int], prefixes: list[str], codes: list[str], longest: int
) -> tuple[list[str], int]:
    """The kept lines, each run of more than ``longest`` import lines made one line."""
    out: list[str] = []
    run: list[int] = []
    collapsed = depth = 0
    for i in [*keep, -1]:
        code = codes[i] if i >= 0 else ""
        open_ = depth > 0 or bool(run and codes[run[-1]].rstrip().endswith("\\"))
        if i >= 0 and (open_ or _IMPORT.match(code)):
            run.append(i)
            depth = max(depth + code.count("(") - code.count(")"), 0)
            continue
        if len(run) > longest:
            names = dict.fromkeys(_module(codes[j]) for j in run if _IMPORT.match(codes[j]))
            out.append(f"{prefixes[run[0]]}[{len(run)} import lines: {', '.join(names)}]")
            collapsed += len(run)
        else:
            out.extend(prefixes[j] + codes[j] for j in run)
        run, depth = [], 0
        out.extend([prefixes[i] + code] if i >= 0 else [])
    return out, collapsed


def _module(code: str) -> str:
    match = _IMPORT.match(code)
    name = (match.group(2) or match.group(1)) if match else code
    return name.split(" from ")[-1].split(" as ")[0].strip(" ;'\"(,\\")


def prune_search(body: str, *, per_file: int = 5, max_matches: int = 50) -> str | None:
    """Search output capped per file and in all; None when nothing is dropped.

    At most ``per_file`` matches per file (``path:line:text``, ``path:text``, or ``line:text`` of a
    single file) and ``max_matches`` in all. A bare path, as ``find`` or ``grep -l`` lists it, is
    its own file, so it counts only towards the total. With ``grep -A/-B/-C`` each ``--``-separated
    group counts as one match and stays whole. Drops are counted in place (``[... 7 more matches in
    a.py ...]``) and at the end.
    """
    out: list[str] = []
    seen: dict[str, int] = {}
    markers: dict[str, int] = {}
    over: list[str] = []
    shown = 0
    for key, unit in _units(body.splitlines()):
        seen[key] = seen.get(key, 0) + 1
        if seen[key] > per_file:
            out.extend([] if key in markers else [""])
            markers.setdefault(key, len(out) - 1)
        elif shown >= max_matches:
            over.append(key)
        else:
            shown += 1
            out.extend(unit)
    for key, pos in markers.items():
        where = f" in {key}" if key else ""
        out[pos] = f"[... {_n(seen[key] - per_file, 'more match')}{where} ...]"
    if over:
        out.append(
            f"[... {_n(len(over), 'more match')} in {_n(len(set(over)), 'file')} dropped "
            f"(at most {max_matches} shown) ...]"
        )
    return "\n".join(out) + "\n" * body.endswith("\n") if markers or over else None


def _n(count: int, noun: str) -> str:
    plural = "es" if noun.endswith("ch") else "s"
    return f"{count} {noun}{'' if count == 1 else plural}"


def _units(lines: list[str]) -> list[tuple[str, list[str]]]:
    """Each match (or ``--``-separated context group) with the file it names: "" for numbered
    lines of one file, the line itself for a bare path (it counts only towards the total)."""
    if "--" not in lines:
        return [(_file_of(line), [line]) for line in lines]
    groups: list[list[str]] = [[]]
    for line in lines:
        if line == "--":
            groups[-1].append(line)
            groups.append([])
        else:
            groups[-1].append(line)
    return [(_file_of(g[0]), g) for g in groups if g]


def _file_of(line: str) -> str:
    match = _FILE_LINE.match(line)
    return line if match is None else match.group("path") or match.group("file") or ""
