"""``contextfold serve``: a proxy that gives any agent context folding, speaking every API in
:data:`~contextfold.serve.apis.APIS` (one subpackage each in ``apis/``), each read at the edge
into the same history steps (:mod:`~contextfold.serve.exchange`). Rooms: ``edge/`` (HTTP),
``sessions/`` (the :class:`Proxy` and its sessions), ``upstream/``, ``ledger/``; here the
shared types (``exchange``, ``errors``, ``config``) and the composition root (``app``,
``build``, ``runner``: the only modules beside ``apis/`` that import an API package).
"""

from __future__ import annotations

from contextfold.serve.app import create_app
from contextfold.serve.build import build_proxy
from contextfold.serve.config import ServeConfig
from contextfold.serve.errors import ApiError, UpstreamError
from contextfold.serve.sessions.proxy import Proxy

__all__ = ["ApiError", "Proxy", "ServeConfig", "UpstreamError", "build_proxy", "create_app"]
