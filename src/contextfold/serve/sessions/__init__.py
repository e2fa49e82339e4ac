"""Sessions: the :class:`~.proxy.Proxy` that takes a client's turn, finds its session
(:mod:`.index`, :mod:`.conversation`), claims it (:mod:`.dispatch`, :mod:`.worker`,
:mod:`.turns`, :mod:`.buffered`, :mod:`.replicas`), renders the strategy's view, runs the rounds
with the upstream (:mod:`.rounds`, :mod:`.shown_stream`, :mod:`.markers`) and learns from ended
sessions (:mod:`.learning`). It may import serve's shared types and the other rooms
(:mod:`..upstream`, :mod:`..ledger`, :mod:`..edge`'s streaming); never an API package."""
