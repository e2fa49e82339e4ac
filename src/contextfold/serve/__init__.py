"""``contextfold serve``: a proxy that gives any agent context folding, speaking OpenAI Chat
Completions, Anthropic Messages and OpenAI Responses (each read at the edge into the same
history steps: :mod:`~contextfold.serve.exchange`).

A client points its base URL at the proxy and resends its conversation each call as usual;
the proxy keeps each as an append-only history (a branch when a client rewrites it), sends the
strategy's view upstream, answers the strategy's own tools itself and streams the answer back
(:func:`create_app`, :func:`build_proxy`, :class:`ServeConfig`).
"""

from __future__ import annotations

from contextfold.serve.app import create_app
from contextfold.serve.build import build_proxy
from contextfold.serve.config import ServeConfig
from contextfold.serve.errors import ApiError, UpstreamError
from contextfold.serve.proxy import Proxy

__all__ = ["ApiError", "Proxy", "ServeConfig", "UpstreamError", "build_proxy", "create_app"]
