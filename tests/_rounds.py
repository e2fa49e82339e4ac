"""Shared by the tests of what a client sees of the proxy's rounds: a client of each API (the
official SDKs, whole or streamed) that asks, shows what it got, and keeps the assistant turn as
its API writes it back, so the next request carries the reply exactly as the client holds it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from contextfold.serve.runner import ProxyThread
from tests._protocols import anthropic_client, openai_client

API_STREAMS = [(api, s) for api in ("chat", "anthropic", "responses") for s in (False, True)]


@dataclass
class Conversation:
    """One client's conversation through the proxy in the API ``api``."""

    proxy: ProxyThread
    api: str
    stream: bool
    tools: list[dict[str, Any]] = field(default_factory=list)
    history: list[dict[str, Any]] = field(default_factory=list)

    def say(self, text: str) -> None:
        self.history.append({"role": "user", "content": text})

    def ask(self) -> Shown:
        """Send the conversation; what the client was shown, its turn kept in the history."""
        shown = {"chat": self._chat, "anthropic": self._anthropic, "responses": self._responses}
        return shown[self.api]()

    def answer_calls(self, shown: Shown, output: str) -> None:
        """Answer each call the client got with ``output``."""
        for call_id in shown.call_ids:
            if self.api == "chat":
                self.history.append({"role": "tool", "tool_call_id": call_id, "content": output})
            elif self.api == "anthropic":
                result = {"type": "tool_result", "tool_use_id": call_id, "content": output}
                self.history.append({"role": "user", "content": [result]})
            else:
                item = {"type": "function_call_output", "call_id": call_id, "output": output}
                self.history.append(item)

    def _chat(self) -> Shown:
        client = openai_client(self.proxy)
        options: dict[str, Any] = {"tools": self.tools} if self.tools else {}
        if not self.stream:
            message = (
                client.chat.completions.create(
                    model="m",
                    messages=self.history,
                    **options,  # type: ignore[arg-type]
                )
                .choices[0]
                .message
            )
            kept = message.model_dump(exclude_none=True)
        else:
            chunks = client.chat.completions.create(
                model="m",
                messages=self.history,
                stream=True,
                **options,  # type: ignore[arg-type]
            )
            text, calls = "", []
            for chunk in chunks:
                delta = chunk.choices[0].delta if chunk.choices else None
                text += (delta.content or "") if delta else ""
                calls += [
                    c.model_dump(exclude_none=True) for c in (delta and delta.tool_calls) or []
                ]
            kept = {"role": "assistant", "content": text}
            if calls:
                kept["tool_calls"] = [{k: v for k, v in c.items() if k != "index"} for c in calls]
        self.history.append(kept)
        ids = [c["id"] for c in kept.get("tool_calls", [])]
        return Shown([kept.get("content") or ""], ["text"] + ["tool_use"] * len(ids), ids)

    def _anthropic(self) -> Shown:
        client = anthropic_client(self.proxy)
        options: dict[str, Any] = {"tools": self.tools} if self.tools else {}
        args = {"model": "m", "max_tokens": 256, "messages": self.history, **options}
        if self.stream:
            with client.messages.stream(**args) as events:
                message = events.get_final_message()
        else:
            message = client.messages.create(**args)
        blocks = [b.model_dump(exclude_none=True) for b in message.content]
        self.history.append({"role": "assistant", "content": blocks})
        texts = [b["text"] for b in blocks if b["type"] == "text"]
        ids = [b["id"] for b in blocks if b["type"] == "tool_use"]
        return Shown(texts, [b["type"] for b in blocks], ids)

    def _responses(self) -> Shown:
        client = openai_client(self.proxy)
        options: dict[str, Any] = {"tools": self.tools} if self.tools else {}
        args = {"model": "m", "input": self.history, "store": False, **options}
        if self.stream:
            response = None
            for event in client.responses.create(stream=True, **args):
                if event.type == "response.completed":
                    response = event.response
            assert response is not None
        else:
            response = client.responses.create(**args)
        items = [i.model_dump(exclude_none=True) for i in response.output]
        self.history.extend(items)
        texts = [p["text"] for i in items if i["type"] == "message" for p in i["content"]]
        ids = [i["call_id"] for i in items if i["type"] == "function_call"]
        kinds = ["text" if i["type"] == "message" else "tool_use" for i in items]
        return Shown(texts, kinds, ids)


@dataclass
class Shown:
    """What a client got: its texts (one per block or message item), the kinds of its blocks
    (``text`` or ``tool_use``) in order, and its calls' ids."""

    texts: list[str]
    kinds: list[str]
    call_ids: list[str]

    @property
    def text(self) -> str:
        return "".join(self.texts)


def weather_tool(api: str) -> dict[str, Any]:
    """A client tool ``weather(city)`` in ``api``'s shape."""
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    if api == "chat":
        return {"type": "function", "function": {"name": "weather", "parameters": schema}}
    if api == "anthropic":
        return {"name": "weather", "input_schema": schema}
    return {"type": "function", "name": "weather", "parameters": schema}


def last_user_text(api: str, body: dict[str, Any]) -> str:
    """The text of the last message (or item) of an upstream request body, results included."""
    messages = body["messages"] if api != "responses" else body["input"]
    last = messages[-1]
    content = last.get("content", last.get("output", ""))
    return content if isinstance(content, str) else json.dumps(content)


Block = tuple[str, ...]
"""A piece of a scripted reply: ``("text", text)`` or ``("call", name, arguments JSON)``."""


def upstream(api: str, script: Any) -> Any:
    """A scripted upstream of ``api`` answering each request with ``script(body)`` (a list of
    :data:`Block`), written in that API's shape."""
    from contextfold.testing.upstreams.anthropic import ScriptedAnthropic, text, tool_use
    from contextfold.testing.upstreams.chat import ScriptedServer
    from contextfold.testing.upstreams.responses import ScriptedResponses, function_call, message

    def chat(body: dict[str, Any]) -> dict[str, Any]:
        blocks = script(body)
        content = "".join(b[1] for b in blocks if b[0] == "text")
        calls = [
            {"id": f"c{i}", "type": "function", "function": {"name": b[1], "arguments": b[2]}}
            for i, b in enumerate(blocks)
            if b[0] == "call"
        ]
        return {
            "role": "assistant",
            "content": content or None,
            **({"tool_calls": calls} if calls else {}),
        }

    def anthropic(body: dict[str, Any]) -> list[dict[str, Any]]:
        return [
            text(b[1]) if b[0] == "text" else tool_use(b[1], json.loads(b[2])) for b in script(body)
        ]

    def responses(body: dict[str, Any]) -> list[dict[str, Any]]:
        return [
            message(b[1]) if b[0] == "text" else function_call(b[1], b[2]) for b in script(body)
        ]

    if api == "chat":
        return ScriptedServer(chat)
    if api == "anthropic":
        return ScriptedAnthropic(anthropic)
    return ScriptedResponses(responses)


def answered(api: str, body: dict[str, Any]) -> bool:
    """Whether an upstream request ends with a tool result (a round after a call)."""
    if api == "chat":
        return body["messages"][-1]["role"] == "tool"
    if api == "anthropic":
        content = body["messages"][-1]["content"]
        return isinstance(content, list) and content[-1].get("type") == "tool_result"
    return body["input"][-1].get("type") == "function_call_output"


def assistant_texts(api: str, body: dict[str, Any]) -> list[str]:
    """The text of each assistant message (or message item) an upstream request carries."""
    if api == "responses":
        items = [i for i in body["input"] if i.get("role") == "assistant"]
        return ["".join(p["text"] for p in i["content"]) for i in items]
    out = []
    for m in body["messages"]:
        if m["role"] != "assistant":
            continue
        content = m["content"]
        if isinstance(content, list):
            content = "".join(b.get("text", "") for b in content if b["type"] == "text")
        out.append(content or "")
    return out
