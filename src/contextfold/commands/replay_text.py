"""What ``contextfold replay`` says besides its table: the paragraphs its ``--help`` closes
with, and why nothing was replayed (an empty file is said to be empty)."""

from __future__ import annotations

from pathlib import Path

from contextfold.commands.common import APPROX, counter_note
from contextfold.core.store.opening import display_store, is_postgres_url

__all__ = ["nothing_replayed", "replay_epilog"]


def replay_epilog() -> str:
    """``replay --help``'s closing paragraphs: the formats it reads (from the importers'
    registry, a line each, in one paragraph), what the table's header and the pricing
    switches mean, and where the rest is written."""
    from contextfold.importers.registry import FORMATS

    head = "Formats, told apart by content (folders are searched recursively):"
    return "\n\n".join(
        [
            "\n".join([head, *(f"{f.name}: {f.summary}" for f in FORMATS)]),
            "Figures are ratios to full's. The header names the model profile and the token "
            f"counter; {counter_note(APPROX)}.",
            "A recorded call may use a value its view left out: the agent would restore it "
            "(a model call of its own) or, where nothing restores it, run its tool again; both "
            "are priced unless --no-restore-pricing or --no-rerun-pricing.",
            "More: docs/measure/replay.md; every option: docs/reference/cli.md.",
        ]
    )


def nothing_replayed(paths: list[str], skipped: int) -> str:
    """The one line replay exits with when no trajectory was read from ``paths``, ``skipped``
    of them refused (each already named)."""
    where = ", ".join(display_store(p) for p in paths)
    empty = [p for p in paths if _blank(p)]
    if not skipped and len(empty) == len(paths):
        return f"{where} {'is' if len(empty) == 1 else 'are'} empty: no trajectories to replay"
    found = [f"{p} is empty" for p in empty]
    found += [f"{p} holds no file in a format replay reads" for p in paths if Path(p).is_dir()]
    why = f"{skipped} skipped, see above" if skipped else "; ".join(found)
    return (
        f"no trajectories to replay in {where} ({why or 'no file in a format it reads'}); give "
        "files in a supported format (see `contextfold replay --help`)"
    )


def _blank(path: str) -> bool:
    """Whether ``path`` is a file holding nothing but white space (read only if small)."""
    if is_postgres_url(path) or not Path(path).is_file():
        return False
    size = Path(path).stat().st_size
    return size == 0 or (size < 1 << 20 and not Path(path).read_bytes().strip())
