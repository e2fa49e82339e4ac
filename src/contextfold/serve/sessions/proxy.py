"""The proxy's work for one request of any API, streamed or not (the HTTP side is in ``app``
and the APIs' modules).

A request runs in three parts: the session is claimed, extended and its view rendered
(:mod:`~contextfold.serve.sessions.dispatch`: the claim on the session thread, the strategy's work
on a worker under the session's lock); the upstream calls run on the event loop (strategy tools
answered in between, see :mod:`~contextfold.serve.sessions.rounds`); on success the turn is
committed, on any failure (the upstream's, or a client that hung up) discarded."""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Callable
from typing import Any

import anyio

from contextfold.core.errors import ContextFoldError
from contextfold.core.ledger import LedgerEntry
from contextfold.core.messages import AssistantMessage
from contextfold.core.protocols import LedgerStore
from contextfold.serve.config import ServeConfig
from contextfold.serve.edge.streaming import Primed
from contextfold.serve.errors import ApiError, UpstreamError
from contextfold.serve.exchange import ClientRequest, ClientStream, ClientWriter, Reply
from contextfold.serve.ledger.bill import Ledger
from contextfold.serve.ledger.metrics import Metrics
from contextfold.serve.sessions.dispatch import Dispatch
from contextfold.serve.sessions.markers import Cut, Markers
from contextfold.serve.sessions.rounds import Rounds
from contextfold.serve.sessions.sessions import SessionManager, Turn
from contextfold.serve.sessions.shown_stream import ShownStream
from contextfold.serve.sessions.worker import SessionThread, SessionWorkers
from contextfold.serve.upstream.pool import POOL_EXHAUSTED, Upstream

__all__ = ["Proxy"]

_log = logging.getLogger(__name__)


class Proxy:
    """Sessions, upstream and metrics of one running proxy; each upstream call, answered or
    failed, is entered in its ledger as it ends (:mod:`~contextfold.serve.ledger.bill`)."""

    def __init__(
        self,
        config: ServeConfig,
        upstream: Upstream,
        open_sessions: Callable[[], SessionManager],
        markers: Markers | None = None,
    ) -> None:
        self.config = config
        self.upstream = upstream
        self.markers = markers or Markers()
        """The strategy's marker lines, kept from every client (:mod:`.markers`)."""
        self.metrics = Metrics()
        self.ledger = Ledger(self.metrics)
        """Every upstream call as billed, beside its direct estimate (:mod:`..ledger.bill`)."""
        self.thread = SessionThread()
        self.workers = SessionWorkers()
        self.dispatch = Dispatch(self.thread, self.workers, lambda: self.manager)
        self._open = open_sessions
        self.sessions: SessionManager | None = None

    def open(self) -> SessionManager:
        """Open the store and load its sessions, on the session thread (once; before the
        server starts, so a store that cannot be served fails in one line). Sessions that
        cannot be read are skipped, logged and counted in ``/metrics``."""
        if self.sessions is None:
            self.sessions = self.thread.call(self._open)
            for session_id, problem in self.sessions.skipped:
                _log.warning("contextfold serve: skipped session %r: %s", session_id, problem)
            self.metrics.set("sessions_skipped", len(self.sessions.skipped))
            self._seed_ledger(self.sessions.store)
        return self.sessions

    def _seed_ledger(self, store: object) -> None:
        """The sessions' token scales from the store's ledger (a restarted proxy's); a ledger
        that cannot be read is logged, and the scales start afresh."""
        if not isinstance(store, LedgerStore):
            return
        try:
            self.ledger.seed(self.thread.call(store.load_ledger))
        except ContextFoldError as exc:
            _log.warning("contextfold serve: the store's ledger cannot be read: %s", exc)

    @property
    def skipped(self) -> list[tuple[str, str]]:
        """Stored sessions not served (they could not be read): id and problem."""
        return list(self.sessions.skipped) if self.sessions is not None else []

    def start(self) -> None:
        """The server starts: open the store unless :meth:`open` did."""
        self.open()

    async def stop(self) -> None:
        """Close the upstream, then the store (on the session thread, which opened it)."""
        await self.upstream.aclose()
        self.close()

    def close(self) -> None:
        """End the workers, close the store (on the session thread), end that thread."""
        self.workers.close()
        if self.sessions is not None:
            self.thread.call(self.sessions.store.close)
        self.thread.close()

    @property
    def manager(self) -> SessionManager:
        if self.sessions is None:
            raise ApiError(503, "the proxy is starting; try again")
        return self.sessions

    # -- one request

    async def begin(self, request: ClientRequest) -> tuple[Turn, Rounds]:
        """The session claimed, extended and rendered
        (:mod:`~contextfold.serve.sessions.dispatch`)."""
        turn = await self.dispatch.begin(request.conversation, request.family)
        self.metrics.add("prompt_tokens_received_total", turn.received_tokens)
        self.metrics.add("prompt_tokens_sent_total", turn.view.total_tokens)
        self.metrics.add("tokens_saved_total", turn.received_tokens - turn.view.total_tokens)
        self.metrics.add("folds_total", turn.folds)
        self.metrics.add("sessions_created_total", int(turn.created))
        return turn, Rounds.start(request, turn, self.config.max_rounds, self.markers)

    async def complete(self, turn: Turn, rounds: Rounds, writer: ClientWriter) -> dict[str, Any]:
        """Non-streamed: every upstream call, then the client's answer (the turn committed
        with it, :meth:`deliver`). The caller discards the turn on failure."""
        request, wire, where = rounds.request, self.upstream.wire, self.upstream.name
        while True:
            call = rounds.call(stream=False)
            try:
                body, path = wire.body(call), wire.path(call)
                data = await self.upstream.complete(body, request.headers, request.query, path=path)
                reply = wire.reply(data, call, where)
            except ApiError as exc:
                await self._call_failed(turn, rounds, exc)
                raise
            await self._after_call(turn, rounds, reply)
            if not await self._answer_own(turn, rounds, reply.message):
                break
        final = rounds.final(reply.message)
        stop = rounds.finish_reason(final.message, reply.stop)
        answer = writer.respond(final.message, stop, rounds.usage, reply)
        await self.deliver(turn, final, request.api)
        return answer

    async def open_stream(self, turn: Turn, rounds: Rounds) -> Primed:
        """The next streamed upstream call, opened and its first event read (the first call
        before the client gets a status)."""
        request, wire = rounds.request, self.upstream.wire
        call = rounds.call(stream=True)
        try:
            body, path = wire.body(call), wire.path(call)
            stream = await self.upstream.stream(body, request.headers, request.query, path=path)
            reader = wire.reader(call, self.upstream.name)
            return await Primed.open(stream, reader, self.upstream.name)
        except ApiError as exc:
            await self._call_failed(turn, rounds, exc)
            raise

    async def stream(
        self, turn: Turn, rounds: Rounds, out: ClientStream, first: Primed
    ) -> AsyncGenerator[bytes, None]:
        """Streamed: text as the upstream sends it (the strategy's marker lines held back:
        :class:`~.shown_stream.ShownStream`), the client's calls once the last round has ended,
        the finish and usage; the turn committed before those last events (:meth:`deliver`).
        Any failure is sent as an error event; an unfinished stream (failure or hang-up)
        discards the turn."""
        committed, stream = False, first
        shown = ShownStream(out, self.markers)
        try:
            for event in out.start():
                yield event
            while True:
                try:
                    async for delta in stream:
                        for event in shown.delta(delta):
                            yield event
                    assert stream.reader is not None
                    reply = stream.reader.reply()
                except ApiError as exc:  # the call failed midway: in the ledger, then sent
                    await self._call_failed(turn, rounds, exc)
                    raise
                finally:
                    with anyio.CancelScope(shield=True):  # also when the client hung up
                        await stream.aclose()
                await self._after_call(turn, rounds, reply)
                if not await self._answer_own(turn, rounds, reply.message):
                    break
                for event in shown.round_end(rounds.texts[-1]):
                    yield event
                stream = await self.open_stream(turn, rounds)
            final = rounds.final(reply.message)
            stop = rounds.finish_reason(final.message, reply.stop)
            events = shown.end(final.message, reply.message.tool_calls, stop, rounds.usage)
            committed = await self.deliver(turn, final, rounds.request.api)
            for event in events:
                yield event
        except ApiError as exc:
            self.failed(exc)
            yield out.error(exc)
        except Exception as exc:  # a defect of the proxy: logged whole, sent as an event
            _log.exception("contextfold serve: a streamed request failed")
            failure = ApiError(500, f"contextfold failed: {type(exc).__name__} (logged)")
            self.failed(failure)
            yield out.error(failure)
        finally:
            if not committed:
                self.discard(turn)

    # -- the turn's ends

    async def deliver(self, turn: Turn, final: Cut, client: str) -> bool:
        """The reply is whole and the client still there: commit the turn, with the reply as
        the history will hold it (its marker lines, and the parts of the upstream's API a
        ``client`` of another API cannot send back: a Gemini upstream's thought signatures)
        when the client sends it back. The one
        place a turn is committed, just before the client gets the reply's last bytes: a
        client that hung up first has nothing of its turn stored (the checkpoint lets its
        cancellation in), and a commit once begun is finished (shielded). True once done."""
        await anyio.lowlevel.checkpoint()
        lost = any(p.api != client for p in final.message.parts)
        turn.reply = final.kept if final.lines or lost else None
        with anyio.CancelScope(shield=True):
            await self.dispatch.commit(turn)
        return True

    def discard(self, turn: Turn) -> None:
        """Forget the turn's writes (nothing awaited: safe from a cancelled task)."""
        self.dispatch.discard(turn)

    def failed(self, exc: ApiError) -> None:
        """Count an error answered; log one that is the upstream's or the proxy's (a 5xx)."""
        self.metrics.add("errors_total", kind=exc.kind)
        if exc.status >= 500 or isinstance(exc, UpstreamError):
            _log.warning("contextfold serve: answered %d: %s", exc.status, exc.message)
        if exc.code == POOL_EXHAUSTED:
            self.metrics.add("upstream_pool_timeouts_total")

    def render_metrics(self) -> str:
        """``/metrics``: the counters, and the gauges as they are now."""
        pool = self.upstream.pool()
        self.metrics.set("upstream_connections_limit", pool.limit)
        self.metrics.set("upstream_connections_in_use", pool.in_use)
        return self.metrics.render()

    # -- between upstream calls

    async def _after_call(self, turn: Turn, rounds: Rounds, reply: Reply) -> None:
        usage, counter = reply.usage, self.manager.counter
        assert rounds.sent is not None
        stop = reply.stop.kind if reply.stop is not None else None  # in no API's words
        entry = self.ledger.entry(
            turn, rounds.sent, counter, round_idx=rounds.done, usage=usage, stop=stop
        )
        rounds.add_usage(usage)
        self.metrics.add("upstream_calls_total")
        self.metrics.add("upstream_prompt_tokens_total", usage["prompt_tokens"])
        self.metrics.add("upstream_cached_tokens_total", usage["cached_tokens"])
        self.metrics.add("upstream_completion_tokens_total", usage["completion_tokens"])
        self.manager.record_call(turn, rounds.sent_messages(), usage)
        await self._enter(entry)

    async def _call_failed(self, turn: Turn, rounds: Rounds, exc: ApiError) -> None:
        """An upstream call failed: entered in the ledger with its error's kind."""
        if rounds.sent is not None:
            counter = self.manager.counter
            kind = exc.kind
            entry = self.ledger.entry(turn, rounds.sent, counter, round_idx=rounds.done, error=kind)
            await self._enter(entry)

    async def _enter(self, entry: LedgerEntry) -> None:
        """Count ``entry`` in ``/metrics`` and write it to the store (on the session thread).
        A write that fails is logged; the request goes on."""
        self.ledger.count(entry)
        store = self.manager.store
        if not isinstance(store, LedgerStore):
            return
        try:
            await self.thread.run(lambda: store.record_ledger(entry))
        except ContextFoldError as exc:
            _log.warning("contextfold serve: a ledger entry was not written: %s", exc)

    async def _answer_own(self, turn: Turn, rounds: Rounds, message: AssistantMessage) -> bool:
        """Answer the strategy's own tool calls in ``message``; False when there are none
        (the message is the client's)."""
        own = rounds.own_calls(message)
        if not own or rounds.done >= rounds.max_rounds:
            return False
        answers = await self.dispatch.call_tools(turn, own)
        self.metrics.add("strategy_tool_calls_total", len(own))
        rounds.continue_with(message, answers)
        return True
