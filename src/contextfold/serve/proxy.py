"""The proxy's work for one chat request, streamed or not (the HTTP side is in ``app``).

A request runs in three parts: the session is claimed, extended and its view rendered
(:mod:`~contextfold.serve.dispatch`: the claim on the session thread, the strategy's work on a
worker under the session's lock); the upstream calls run on the event loop (strategy tools
answered in between, see :mod:`~contextfold.serve.rounds`); on success the turn is
committed, on any failure (the upstream's, or a client that hung up) discarded.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Callable
from typing import Any

import anyio

from contextfold.serve.config import ServeConfig
from contextfold.serve.dispatch import Dispatch
from contextfold.serve.errors import ApiError
from contextfold.serve.metrics import Metrics
from contextfold.serve.replies import reply_message, usage_numbers
from contextfold.serve.request import ChatRequest
from contextfold.serve.rounds import Rounds
from contextfold.serve.sessions import SessionManager, Turn
from contextfold.serve.streaming import Accumulator, ClientStream, Primed, sse
from contextfold.serve.upstream import POOL_EXHAUSTED, Upstream
from contextfold.serve.worker import SessionThread, SessionWorkers

__all__ = ["Proxy"]

_log = logging.getLogger(__name__)


class Proxy:
    """Sessions, upstream and metrics of one running proxy."""

    def __init__(
        self,
        config: ServeConfig,
        upstream: Upstream,
        open_sessions: Callable[[], SessionManager],
    ) -> None:
        self.config = config
        self.upstream = upstream
        self.metrics = Metrics()
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
        return self.sessions

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

    async def begin(self, request: ChatRequest) -> tuple[Turn, Rounds]:
        """The session claimed, extended and rendered (:mod:`~contextfold.serve.dispatch`)."""
        turn = await self.dispatch.begin(request.conversation, request.family)
        self.metrics.add("prompt_tokens_received_total", turn.received_tokens)
        self.metrics.add("prompt_tokens_sent_total", turn.view.total_tokens)
        self.metrics.add("tokens_saved_total", turn.received_tokens - turn.view.total_tokens)
        self.metrics.add("folds_total", turn.folds)
        self.metrics.add("sessions_created_total", int(turn.created))
        return turn, Rounds.start(request, turn, self.config.max_rounds)

    async def complete(self, turn: Turn, rounds: Rounds, auth: str | None) -> dict[str, Any]:
        """Non-streamed: every upstream call, then the client's completion. Committed on
        success; the caller discards on failure."""
        where = self.upstream.name
        while True:
            reply = await self.upstream.complete(rounds.body(stream=False), auth)
            message = reply_message(reply, where)
            await self._after_call(turn, rounds, usage_numbers(reply.get("usage"), where))
            if not await self._answer_own(turn, rounds, message):
                break
        await self.commit(turn)
        choice = reply["choices"][0]
        choice["message"] = final = rounds.final(message)
        choice["finish_reason"] = rounds.finish_reason(final, choice.get("finish_reason"))
        reply["usage"] = rounds.client_usage()
        return reply

    async def open_stream(self, rounds: Rounds, auth: str | None) -> Primed:
        """The next streamed upstream call, opened and its first chunk read (the first call
        before the client gets a status)."""
        stream = await self.upstream.stream(rounds.body(stream=True), auth)
        return await Primed.open(stream, self.upstream.name)

    async def stream(
        self, turn: Turn, rounds: Rounds, auth: str | None, first: Primed
    ) -> AsyncGenerator[bytes, None]:
        """Streamed: text as the upstream sends it, held tool calls at the end of the last
        round, the finish, usage if asked, ``[DONE]``. Any failure is sent as an error event;
        an unfinished stream (failure or hang-up) discards the turn."""
        out = ClientStream(str(rounds.request.body["model"]))
        committed, stream, where = False, first, self.upstream.name
        try:
            while True:
                acc = Accumulator(where)
                try:
                    async for chunk in stream:
                        for key, text in acc.add(chunk).items():
                            yield out.chunk({key: text})
                finally:
                    with anyio.CancelScope(shield=True):  # also when the client hung up
                        await stream.aclose()
                message = acc.message()
                await self._after_call(turn, rounds, usage_numbers(acc.usage, where))
                if not await self._answer_own(turn, rounds, message):
                    break
                stream = await self.open_stream(rounds, auth)
            await self.commit(turn)
            committed = True
            for event in _ending(out, rounds, message, acc.finish_reason):
                yield event
        except ApiError as exc:
            self.failed(exc)
            yield sse(exc.body())
        except Exception as exc:  # a defect of the proxy: logged whole, sent as an event
            _log.exception("contextfold serve: a streamed request failed")
            failure = ApiError(500, f"contextfold failed: {type(exc).__name__} (logged)")
            self.failed(failure)
            yield sse(failure.body())
        finally:
            if not committed:
                self.discard(turn)

    # -- the turn's ends

    async def commit(self, turn: Turn) -> None:
        await self.dispatch.commit(turn)

    def discard(self, turn: Turn) -> None:
        """Forget the turn's writes (nothing awaited: safe from a cancelled task)."""
        self.dispatch.discard(turn)

    def failed(self, exc: ApiError) -> None:
        self.metrics.add("errors_total", kind=exc.kind)
        if exc.code == POOL_EXHAUSTED:
            self.metrics.add("upstream_pool_timeouts_total")

    def render_metrics(self) -> str:
        """``/metrics``: the counters, and the gauges as they are now."""
        pool = self.upstream.pool()
        self.metrics.set("upstream_connections_limit", pool.limit)
        self.metrics.set("upstream_connections_in_use", pool.in_use)
        return self.metrics.render()

    # -- between upstream calls

    async def _after_call(self, turn: Turn, rounds: Rounds, usage: dict[str, int]) -> None:
        rounds.add_usage(usage)
        self.metrics.add("upstream_calls_total")
        self.metrics.add("upstream_prompt_tokens_total", usage["prompt_tokens"])
        self.metrics.add("upstream_cached_tokens_total", usage["cached_tokens"])
        self.metrics.add("upstream_completion_tokens_total", usage["completion_tokens"])
        self.manager.record_call(turn, rounds.sent_messages(), usage)

    async def _answer_own(self, turn: Turn, rounds: Rounds, message: dict[str, Any]) -> bool:
        """Answer the strategy's own tool calls in ``message``; False when there are none
        (the message is the client's)."""
        own = rounds.own_calls(message)
        if not own or rounds.done >= rounds.max_rounds:
            return False
        answers = await self.dispatch.call_tools(turn, own)
        self.metrics.add("strategy_tool_calls_total", len(own))
        rounds.continue_with(message, answers)
        return True


def _ending(
    out: ClientStream, rounds: Rounds, message: dict[str, Any], given: str | None
) -> list[bytes]:
    """The events after the last round's text: a note if the client gets nothing else, the
    client's tool calls, the finish, usage if asked, ``[DONE]``."""
    final = rounds.final(message)
    events = [out.chunk({"content": note})] if (note := rounds.note(message)) else []
    if final.get("tool_calls"):
        events.append(out.tool_calls(final["tool_calls"]))
    events.append(out.chunk({}, rounds.finish_reason(final, given)))
    if rounds.request.include_usage:
        events.append(out.usage(rounds.client_usage()))
    return [*events, sse("[DONE]")]
