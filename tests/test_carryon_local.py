"""One real carryon fold with the embedded SmolLM2-135M as folder: the schema grammar makes
each stage's reply parse; whether the fold commits depends on what the tiny model cites, so
the test checks that the fold ends as a well-formed record either way and changes the view
only when it commits."""

from __future__ import annotations

from contextfold.core.protocols import Folding
from contextfold.core.view import render_checked
from contextfold.strategies.folding import FolderSource
from contextfold.strategies.registry import build_strategy
from tests.test_carryon import session


def test_one_real_carryon_fold_with_the_embedded_model() -> None:
    source = FolderSource(default="local", threads=1)
    s = build_strategy(
        "carryon threshold=40 tracker_max_tokens=96 compiler_max_tokens=160 gate=none",
        folders=source,
    )
    history = session(4)
    before = render_checked(s, history, None)
    assert isinstance(s, Folding)
    (record,) = s.fold(history, None)
    assert record.calls and all(c.prompt_tokens > 0 for c in record.calls)
    after = render_checked(s, history, None)
    if record.accepted:
        assert "# Continuation carriers" in after.messages[2].content
    else:
        assert record.reason and record.output["stage"] in {"tracker", "compiler", "validation"}
        assert after.messages == before.messages
