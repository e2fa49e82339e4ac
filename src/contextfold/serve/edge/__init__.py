"""The HTTP edge every API shares: reading a request's body and its shared fields
(:mod:`.request`, :mod:`.body`), routing and error shapes (:mod:`.routes`), server-sent events
(:mod:`.events`, :mod:`.streaming`), answering a client from a turn (:mod:`.answer`), the
loopback check (:mod:`.loopback`), the shapes of replies (:mod:`.shapes`). It may import
serve's shared types (``exchange``, ``errors``, ``config``) and the other rooms; never an API
package."""
