"""``Session``: the front door for a loop of one's own (see :mod:`.session`)."""

from contextfold.session.prepared import Prepared
from contextfold.session.session import Session

__all__ = ["Prepared", "Session"]
