"""``contextfold serve``: a proxy that gives any agent context folding, speaking every API in
:data:`~contextfold.serve.apis.APIS` (OpenAI Chat Completions, Anthropic Messages, OpenAI
Responses, Gemini: one subpackage each in ``apis/``), each read at the edge into the same history
steps (:mod:`~contextfold.serve.exchange`); the modules here are shared by every API. A client
resends its conversation each call as usual; the proxy keeps it as an append-only history,
sends the strategy's view upstream, answers the strategy's own tools itself and streams the
answer back (:func:`create_app`, :func:`build_proxy`, :class:`ServeConfig`).
"""

from __future__ import annotations

from contextfold.serve.app import create_app
from contextfold.serve.build import build_proxy
from contextfold.serve.config import ServeConfig
from contextfold.serve.errors import ApiError, UpstreamError
from contextfold.serve.proxy import Proxy

__all__ = ["ApiError", "Proxy", "ServeConfig", "UpstreamError", "build_proxy", "create_app"]
