"""``contextfold serve``: a proxy that gives any agent context folding, speaking every API
registered in :data:`~contextfold.serve.apis.APIS` (today OpenAI Chat Completions, Anthropic
Messages and OpenAI Responses), each read at the edge into the same history steps
(:mod:`~contextfold.serve.exchange`).

A client points its base URL at the proxy and resends its conversation each call as usual;
the proxy keeps each as an append-only history (a branch when a client rewrites it), sends the
strategy's view upstream, answers the strategy's own tools itself and streams the answer back
(:func:`create_app`, :func:`build_proxy`, :class:`ServeConfig`).

Layout: ``apis/<api>/`` holds everything one API has (its request type and reading, its
answers, its error shape, its upstream wire), exported as one
:class:`~contextfold.serve.apis.spec.ApiSpec`; the modules here are shared by every API (the
app and routes, the request's common checks, sessions and their store, the upstream calls and
the rounds of the strategy's tools, translation to a Chat Completions upstream).
"""

from __future__ import annotations

from contextfold.serve.app import create_app
from contextfold.serve.build import build_proxy
from contextfold.serve.config import ServeConfig
from contextfold.serve.errors import ApiError, UpstreamError
from contextfold.serve.proxy import Proxy

__all__ = ["ApiError", "Proxy", "ServeConfig", "UpstreamError", "build_proxy", "create_app"]
