"""A scripted OpenAI Responses server with automatic prefix caching, for offline tests.

A real HTTP server the openai SDK and Codex CLI talk to (:class:`ScriptedResponses`), stateful
as OpenAI is: it refuses what the real API refuses and reports cached tokens as it does, so a
proxy that rewrites a conversation wrongly, or breaks its cache, fails a test.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Iterable
from typing import Any

from contextfold.testing.upstreams._cache import AutomaticCache, Bill
from contextfold.testing.upstreams._http import (
    Answer,
    Received,
    Script,
    ScriptedHTTP,
    ScriptEnded,
)
from contextfold.testing.upstreams._prompt import (
    generated_tokens,
    response_item_text,
    responses_prompt,
)
from contextfold.testing.upstreams._responses_checks import (
    Problem,
    check_body,
    check_input,
    seal,
)
from contextfold.testing.upstreams._responses_events import stream_events

__all__ = [
    "ResponsesReply",
    "ScriptedResponses",
    "custom_tool_call",
    "echo",
    "function_call",
    "message",
    "reasoning",
]

ResponsesReply = str | list[dict[str, Any]]
"""A reply: plain text, or output items (ids, statuses and missing ``call_id`` are filled in;
a ``reasoning`` item gets ``encrypted_content`` when the request's ``include`` asks for it)."""


def message(text: str) -> dict[str, Any]:
    part = {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
    return {"type": "message", "role": "assistant", "content": [part]}


def function_call(name: str, arguments: dict[str, Any] | str, **extra: Any) -> dict[str, Any]:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"type": "function_call", "name": name, "arguments": raw, **extra}


def custom_tool_call(name: str, input: str, **extra: Any) -> dict[str, Any]:
    return {"type": "custom_tool_call", "name": name, "input": input, **extra}


def reasoning(summary: str) -> dict[str, Any]:
    return {"type": "reasoning", "summary": [{"type": "summary_text", "text": summary}]}


def echo(body: dict[str, Any]) -> ResponsesReply:
    """Answers ``ok: <the last input text's first 40 characters>``."""
    source = body.get("input")
    if isinstance(source, list):
        content = source[-1].get("content") if source else ""
        parts = content if isinstance(content, list) else [{"text": content or ""}]
        source = " ".join(p.get("text", "") for p in parts)
    return f"ok: {str(source or '')[:40]}"


class ScriptedResponses(ScriptedHTTP):
    """A Responses-style upstream; :attr:`url` is the SDK's ``base_url`` (ends in ``/v1``).

    It answers ``POST /v1/responses`` (streamed in OpenAI's event sequence, or not), ``GET`` and
    ``DELETE /v1/responses/{id}`` and ``GET /v1/models`` on the loopback address, with replies
    scripted like :class:`~contextfold.models.ScriptedModel`'s (a list used in order, or a
    function of the request body and its whole input). It is stateful as OpenAI is: a response
    is kept unless ``store`` is false, and ``previous_response_id`` continues from it (its input
    and output come before the new input; its instructions do not carry over; an unknown id is a
    404). It checks the bearer token and the body
    (:mod:`contextfold.testing.upstreams._responses_checks`) and answers errors in OpenAI's shape
    (``{"error": {"message", "type", "param", "code"}}``). Usage reports
    ``input_tokens_details.cached_tokens`` from an
    :class:`~contextfold.testing.upstreams._cache.AutomaticCache`.
    """

    def __init__(
        self,
        replies: Iterable[ResponsesReply] | Callable[[dict[str, Any]], ResponsesReply] = echo,
        *,
        api_key: str | None = None,
        min_cache_tokens: int = 1024,
        cache_step_tokens: int = 128,
        chunk_delay: float = 0.0,
        port: int = 0,
    ) -> None:
        super().__init__(chunk_delay=chunk_delay, port=port)
        self.script: Script[ResponsesReply] = Script(replies)
        self.api_key = api_key
        """The only key accepted (None: any non-empty key)."""
        self.cache = AutomaticCache(min_tokens=min_cache_tokens, step_tokens=cache_step_tokens)
        self.fail: tuple[int, str] | None = None
        """When set, every responses request is answered with this status and message."""
        self.stream_error: str | None = None
        """When set, a stream stops after its first delta with an ``error`` event of this code."""
        self.stored: dict[str, tuple[list[dict[str, Any]], dict[str, Any]]] = {}
        """Each stored response: its whole input and the response object."""
        self.bills: list[Bill] = []
        """What each answered responses call was billed for, in order."""
        self.url = f"{self.root}/v1"
        self._ids = itertools.count(1)

    @property
    def calls(self) -> list[dict[str, Any]]:
        """The bodies of the ``POST /v1/responses`` requests received, in order."""
        return [r.body for r in self.requests if r.path == "/v1/responses" and r.method == "POST"]

    def __enter__(self) -> ScriptedResponses:
        super().__enter__()
        return self

    def answer(self, received: Received) -> Answer:
        key = _bearer(received.headers)
        if not key:
            return self.error(Problem("You didn't provide an API key.", status=401))
        if self.api_key is not None and key != self.api_key:
            return self.error(Problem("Incorrect API key provided.", None, "invalid_api_key", 401))
        route, path = received.method, received.path
        if (route, path) == ("GET", "/v1/models"):
            return Answer(body={"object": "list", "data": [_model()]})
        if (route, path) == ("POST", "/v1/responses"):
            return self._create(received.body)
        rid = path.removeprefix("/v1/responses/")
        if path.startswith("/v1/responses/") and "/" not in rid and route in {"GET", "DELETE"}:
            return self._stored(route, rid)
        return self.error(Problem(f"Invalid URL ({route} {path})", status=404))

    def refuse(self, status: int, message: str) -> Answer:
        return self.error(Problem(message, status=status))

    def error(self, problem: Problem) -> Answer:
        """An error in OpenAI's shape."""
        kind = "invalid_request_error" if problem.status < 500 else "server_error"
        error = {"message": problem.message, "type": kind, "param": problem.param}
        return Answer(status=problem.status, body={"error": {**error, "code": problem.code}})

    def _stored(self, method: str, rid: str) -> Answer:
        if rid not in self.stored:
            return self.error(Problem(f"Response with id '{rid}' not found.", status=404))
        if method == "DELETE":
            del self.stored[rid]
            return Answer(body={"id": rid, "object": "response.deleted", "deleted": True})
        return Answer(body=self.stored[rid][1])

    def _create(self, body: Any) -> Answer:
        if not isinstance(body, dict):
            return self.error(Problem("The body of your request must be a JSON object."))
        problem = check_body(body)
        items, problem = (None, problem) if problem else self._input(body)
        if problem is None and items is not None:
            problem = check_input(items)
        if problem is not None or items is None:
            return self.error(problem or Problem("input: missing"))
        if self.fail is not None:
            return self.error(Problem(self.fail[1], status=self.fail[0]))
        try:
            reply = self.script.next({**body, "input": items})
        except ScriptEnded as e:
            return self.error(Problem(str(e), status=500))
        response = self._response(body, items, reply)
        if body.get("store", True) is not False:
            self.stored[response["id"]] = (items, response)
        if body.get("stream"):
            return Answer(events=stream_events(response, self.stream_error))
        return Answer(body=response)

    def _input(self, body: dict[str, Any]) -> tuple[list[dict[str, Any]] | None, Problem | None]:
        """The whole input: the earlier response's input and output, then this request's."""
        source = body.get("input") or []
        new = [{"role": "user", "content": source}] if isinstance(source, str) else list(source)
        previous = body.get("previous_response_id")
        if previous is None:
            return new, None
        if previous not in self.stored:
            message = f"Previous response with id '{previous}' not found."
            code = "previous_response_not_found"
            return None, Problem(message, "previous_response_id", code, 404)
        before, response = self.stored[previous]
        return before + response["output"] + new, None

    def _response(
        self, body: dict[str, Any], items: list[dict[str, Any]], reply: ResponsesReply
    ) -> dict[str, Any]:
        output = self._items(
            reply, encrypted="reasoning.encrypted_content" in body.get("include", [])
        )
        cached = self.cache.lookup(responses_prompt(body, items))
        out = generated_tokens([response_item_text(item) for item in output])
        self.bills.append(Bill(cached, out))
        return {
            "id": f"resp_scripted{next(self._ids)}",
            "object": "response",
            "created_at": time.time(),
            "status": "completed",
            "model": body["model"],
            "output": output,
            "instructions": body.get("instructions"),
            "previous_response_id": body.get("previous_response_id"),
            "store": body.get("store", True),
            "parallel_tool_calls": body.get("parallel_tool_calls", True),
            "tool_choice": body.get("tool_choice", "auto"),
            "tools": body.get("tools") or [],
            "error": None,
            "incomplete_details": None,
            "metadata": body.get("metadata") or {},
            "usage": {
                "input_tokens": cached.total,
                "input_tokens_details": {"cached_tokens": cached.read, "cache_write_tokens": 0},
                "output_tokens": out,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": cached.total + out,
            },
        }

    def _items(self, reply: ResponsesReply, *, encrypted: bool) -> list[dict[str, Any]]:
        out = []
        for item in [message(reply)] if isinstance(reply, str) else reply:
            n = next(self._ids)
            prefix = {
                "message": "msg",
                "reasoning": "rs",
                "function_call": "fc",
                "custom_tool_call": "ctc",
            }
            item = {"id": f"{prefix.get(item['type'], 'item')}_scripted{n}", **item}
            if item["type"] != "reasoning":
                item.setdefault("status", "completed")
            if item["type"] in {"function_call", "custom_tool_call"}:
                item.setdefault("call_id", f"call_scripted{n}")
            if item["type"] == "reasoning" and encrypted:
                item.setdefault("encrypted_content", seal(item["id"]))
            out.append(item)
        return out


def _bearer(headers: dict[str, str]) -> str:
    value = headers.get("authorization", "")
    return value[7:].strip() if value.lower().startswith("bearer ") else ""


def _model() -> dict[str, Any]:
    return {"id": "scripted", "object": "model", "created": 0, "owned_by": "contextfold"}
