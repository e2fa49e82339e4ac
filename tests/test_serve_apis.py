"""The APIs served are known by their ApiSpec alone: each names itself alike in the registry,
on its wire and on its request type, and the request type every API shares names none."""

from __future__ import annotations

from dataclasses import fields

import pytest
from starlette.datastructures import Headers

from contextfold.serve.apis import APIS
from contextfold.serve.apis.anthropic._wire import ANTHROPIC_HEADERS
from contextfold.serve.apis.chat.wire import OPENAI_HEADERS
from contextfold.serve.edge.request import tool_list, upstream_headers
from contextfold.serve.errors import ApiError
from contextfold.serve.exchange import ClientRequest

SHARED = {"body", "conversation", "family", "stream", "tools", "tool_names", "offer_own"}


def test_each_api_names_itself_alike_in_the_registry_and_on_its_wire() -> None:
    for name, spec in APIS.items():
        assert spec.name == name
        assert spec.wire().api == name


def test_each_api_reads_its_requests_into_its_own_subclass() -> None:
    kinds = {sub.api: sub for sub in ClientRequest.__subclasses__()}
    assert set(kinds) == set(APIS)


def test_the_shared_request_holds_no_api_s_own_fields() -> None:
    assert {f.name for f in fields(ClientRequest)} == SHARED | {"headers", "query"}


def test_the_tools_array_is_checked_alike_for_every_api() -> None:
    def no_x(i: int, tool: object) -> ApiError | None:
        return ApiError(400, f"tools[{i}] is x", param="tools") if tool == "x" else None

    assert tool_list(None, no_x) == []
    assert tool_list(["a"], no_x) == ["a"]
    with pytest.raises(ApiError, match="'tools' must be an array"):
        tool_list({"a": 1}, no_x)
    with pytest.raises(ApiError, match=r"tools\[1\] is x"):
        tool_list(["a", "x"], no_x)


def test_a_client_s_headers_go_only_to_an_upstream_of_its_provider() -> None:
    sent = Headers(
        raw=[
            (b"x-api-key", b"sk-ant-1"),
            (b"anthropic-beta", b"a"),
            (b"anthropic-beta", b"b"),
            (b"openai-beta", b"o"),
        ]
    )
    to_anthropic = upstream_headers(sent, None, ANTHROPIC_HEADERS, ANTHROPIC_HEADERS)
    assert to_anthropic == {"anthropic-beta": "a,b", "x-api-key": "sk-ant-1"}
    assert upstream_headers(sent, None, ANTHROPIC_HEADERS, OPENAI_HEADERS) == {}
    assert upstream_headers(sent, None, OPENAI_HEADERS, OPENAI_HEADERS) == {"openai-beta": "o"}
