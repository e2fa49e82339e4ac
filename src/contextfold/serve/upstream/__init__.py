"""The upstream side: the connection pool to a model server and the :class:`~.pool.Wire` an API
speaks to it (:mod:`.pool`), the upstream's errors as the client's (:mod:`.errors`), and the
embedded model served in-process (:mod:`.local`, fitted to its window by :mod:`.local_fit`).
It may import serve's shared types and the other rooms (:mod:`..edge`'s body helpers); a wire
is given to it, never imported from an API package."""
