"""The proxy's work for one chat request, streamed or not (the HTTP side is in ``app``).

A request runs in three parts: on the session thread, :meth:`SessionManager.begin` finds the
session and renders the view; the upstream calls run on the event loop (strategy tools
answered in between, see :mod:`~contextfold.serve.rounds`); on success the turn is
committed, on any failure (the upstream's, or a client that hung up) discarded.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from typing import Any

import anyio

from contextfold.core.messages import from_openai
from contextfold.serve.config import ServeConfig
from contextfold.serve.errors import ApiError
from contextfold.serve.metrics import Metrics
from contextfold.serve.request import ChatRequest
from contextfold.serve.rounds import Rounds, first_message
from contextfold.serve.sessions import SessionManager, Turn
from contextfold.serve.streaming import Accumulator, ClientStream, sse
from contextfold.serve.upstream import ChunkStream, Upstream, usage_numbers
from contextfold.serve.worker import SessionThread

__all__ = ["Proxy"]


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
        self._open = open_sessions
        self.sessions: SessionManager | None = None

    def start(self) -> None:
        """Open the store and index its sessions, on the session thread."""
        self.sessions = self.thread.call(self._open)
        self.thread.call(self.sessions.load)

    async def stop(self) -> None:
        """Close the upstream, then the store (on the session thread, which opened it)."""
        await self.upstream.aclose()
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
        manager = self.manager
        turn = await self.thread.run(lambda: manager.begin(request.conversation, request.family))
        self.metrics.add("prompt_tokens_received_total", turn.received_tokens)
        self.metrics.add("prompt_tokens_sent_total", turn.view.total_tokens)
        self.metrics.add("tokens_saved_total", turn.received_tokens - turn.view.total_tokens)
        self.metrics.add("folds_total", turn.folds)
        self.metrics.add("sessions_created_total", int(turn.created))
        return turn, Rounds.start(request, turn, self.config.max_rounds)

    async def complete(self, turn: Turn, rounds: Rounds, auth: str | None) -> dict[str, Any]:
        """Non-streamed: every upstream call, then the client's completion. Committed on
        success; the caller discards on failure."""
        while True:
            reply = await self.upstream.complete(rounds.body(stream=False), auth)
            message = first_message(reply, self.upstream.name)
            await self._after_call(turn, rounds, usage_numbers(reply.get("usage")))
            if not await self._answer_own(turn, rounds, message):
                break
        await self.commit(turn)
        reply["choices"][0]["message"] = rounds.final(message)
        reply["usage"] = rounds.client_usage()
        return reply

    async def open_stream(self, rounds: Rounds, auth: str | None) -> ChunkStream:
        """The first streamed upstream call, opened before the client gets a status."""
        return await self.upstream.stream(rounds.body(stream=True), auth)

    async def stream(
        self, turn: Turn, rounds: Rounds, auth: str | None, first: ChunkStream
    ) -> AsyncGenerator[bytes, None]:
        """Streamed: text as the upstream sends it, held tool calls at the end of the last
        round, the finish, usage if asked, ``[DONE]``. Any failure is sent as an error event;
        an unfinished stream (failure or hang-up) discards the turn."""
        out = ClientStream(str(rounds.request.body["model"]))
        committed, stream = False, first
        try:
            while True:
                acc = Accumulator()
                try:
                    async for chunk in stream:
                        for key, text in acc.add(chunk).items():
                            yield out.chunk({key: text})
                finally:
                    with anyio.CancelScope(shield=True):  # also when the client hung up
                        await stream.aclose()
                message = acc.message()
                await self._after_call(turn, rounds, usage_numbers(acc.usage))
                if not await self._answer_own(turn, rounds, message):
                    break
                stream = await self.upstream.stream(rounds.body(stream=True), auth)
            await self.commit(turn)
            committed = True
            if message.get("tool_calls"):
                yield out.tool_calls(message["tool_calls"])
            yield out.chunk({}, acc.finish_reason or "stop")
            if rounds.request.include_usage:
                yield out.usage(rounds.client_usage())
            yield sse("[DONE]")
        except ApiError as exc:
            self.failed(exc)
            yield sse(exc.body())
        finally:
            if not committed:
                self.discard(turn)

    # -- the turn's ends

    async def commit(self, turn: Turn) -> None:
        manager = self.manager
        await self.thread.run(lambda: manager.commit(turn))

    def discard(self, turn: Turn) -> None:
        """Forget the turn's writes (queued on the session thread; nothing awaited, so this
        is safe from a cancelled task)."""
        manager = self.manager
        self.thread.post(lambda: manager.discard(turn))

    def failed(self, exc: ApiError) -> None:
        self.metrics.add("errors_total", kind=exc.kind)

    # -- between upstream calls

    async def _after_call(self, turn: Turn, rounds: Rounds, usage: dict[str, int]) -> None:
        rounds.add_usage(usage)
        self.metrics.add("upstream_calls_total")
        self.metrics.add("upstream_prompt_tokens_total", usage["prompt_tokens"])
        self.metrics.add("upstream_cached_tokens_total", usage["cached_tokens"])
        self.metrics.add("upstream_completion_tokens_total", usage["completion_tokens"])
        manager, sent = self.manager, [from_openai(m) for m in rounds.messages]
        await self.thread.run(lambda: manager.record_call(turn, sent, usage))

    async def _answer_own(self, turn: Turn, rounds: Rounds, message: dict[str, Any]) -> bool:
        """Answer the strategy's own tool calls in ``message``; False when there are none
        (the message is the client's)."""
        own = rounds.own_calls(message)
        if not own or rounds.done >= rounds.max_rounds:
            return False
        manager = self.manager

        def answer() -> dict[str, str]:
            return {
                c["id"]: manager.call_tool(turn, c["function"]["name"], c["function"]["arguments"])
                for c in own
            }

        answers = await self.thread.run(answer)
        self.metrics.add("strategy_tool_calls_total", len(own))
        rounds.continue_with(message, answers)
        return True
