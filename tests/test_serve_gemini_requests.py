"""What a Gemini client sends that the proxy must refuse or route, driven by the official
``google-genai`` SDK (its ``extra_body`` carries what its types would not let through): each
is Google's error shape naming the field (never a 500), before anything goes upstream or is
stored, with a Gemini upstream and with a Chat Completions one."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from google import genai
from google.genai import errors, types

from contextfold.testing.upstreams.chat import ScriptedServer
from contextfold.testing.upstreams.gemini import ScriptedGemini
from tests._protocols import TOKEN, openai_client, proxy_for, root, sessions

MODEL = "gemini-3-flash-preview"
KEY = "gm-client-key"
SAID = [{"role": "user", "parts": [{"text": "hi"}]}]


def _client(
    proxy: Any, *, token: bool = True, key: str = KEY, version: str | None = None
) -> genai.Client:
    options = types.HttpOptions(
        base_url=root(proxy),
        api_version=version,
        headers={"X-Contextfold-Token": TOKEN} if token else {},
        retry_options=types.HttpRetryOptions(attempts=1),
    )
    return genai.Client(api_key=key, http_options=options)


def _upstream(kind: str) -> Any:
    return ScriptedGemini(api_key=KEY) if kind == "gemini" else ScriptedServer()


def _refused(proxy: Any, body: dict[str, Any], count: bool) -> errors.ClientError:
    """The SDK's error for a request whose body carries ``body`` over its own."""
    client = _client(proxy)
    extra = types.HttpOptions(extra_body=body)
    with pytest.raises(errors.ClientError) as raised:
        if count:
            config = types.CountTokensConfig(http_options=extra)
            client.models.count_tokens(model=MODEL, contents="hi", config=config)
        else:
            settings = types.GenerateContentConfig(http_options=extra)
            client.models.generate_content(model=MODEL, contents="hi", config=settings)
    return raised.value


def _calls(up: Any) -> list[Any]:
    return list(up.requests)


BAD = [
    ({"toolConfig": "auto"}, "toolConfig"),
    ({"toolConfig": {"functionCallingConfig": ["ANY"]}}, "toolConfig.functionCallingConfig"),
    ({"toolConfig": {"functionCallingConfig": {"allowedFunctionNames": 3}}},
     "toolConfig.functionCallingConfig.allowedFunctionNames"),
    ({"contents": [{"role": "user", "parts": [{"text": ""}]}]}, "contents[0].parts[0]"),
    ({"contents": [{"role": "user", "parts": [{"text": "hi"}, {}]}]}, "contents[0].parts[1]"),
    ({"contents": [{"role": "user", "parts": [{"text": "hi"}, {"inlineData": "AAAA"}]}]},
     "contents[0].parts[1].inlineData"),
    ({"contents": SAID, "systemInstruction": {"parts": [{"text": ""}]}},
     "systemInstruction.parts[0]"),
    ({"contents": SAID, "systemInstruction": {"parts": [{"text": " \n"}]}}, "systemInstruction"),
]  # fmt: skip


@pytest.mark.parametrize("count", [False, True], ids=["generate", "count"])
@pytest.mark.parametrize("kind", ["gemini", "chat"])
@pytest.mark.parametrize(("body", "field"), BAD, ids=[f for _, f in BAD])
def test_a_malformed_request_is_a_400_naming_the_field(
    tmp_path: Path, body: dict[str, Any], field: str, kind: str, count: bool
) -> None:
    store = tmp_path / "s.db"
    with _upstream(kind) as up, proxy_for(up, kind, store, upstream_key=KEY) as proxy:
        refused = _refused(proxy, body, count)
        sent = _calls(up)
    assert (refused.code, refused.status) == (400, "INVALID_ARGUMENT")
    assert str(refused.message).startswith(f"{field}: "), refused.message
    assert sent == [] and sessions(store) == {}


def test_media_a_chat_upstream_cannot_take_is_refused_naming_its_part(tmp_path: Path) -> None:
    pdf = types.Part.from_bytes(data=b"%PDF-1.4", mime_type="application/pdf")
    by_uri = types.Part.from_uri(file_uri="gs://bucket/a.mp4", mime_type="video/mp4")
    store = tmp_path / "s.db"
    with ScriptedServer() as up, proxy_for(up, "chat", store) as proxy:
        client = _client(proxy)
        refusals = []
        for media in (pdf, by_uri):
            asked = types.Content(role="user", parts=[types.Part(text="Read it."), media])
            with pytest.raises(errors.ClientError) as raised:
                client.models.generate_content(model="m", contents=[asked])
            refusals.append(str(raised.value.message))
    assert refusals[0].startswith("contents[0].parts[1]: an inlineData part of type")
    assert refusals[1].startswith("contents[0].parts[1]: a fileData part")
    assert all("cannot be sent to a Chat Completions upstream" in r for r in refusals)
    assert up.requests == [] and sessions(store) == {}


def test_the_401_names_the_ways_a_gemini_client_sends_the_token() -> None:
    with ScriptedGemini(api_key=KEY) as up, proxy_for(up, "gemini") as proxy:
        client = _client(proxy, token=False, key="wrong")
        with pytest.raises(errors.ClientError) as raised:
            client.models.generate_content(model=MODEL, contents="hi")
    assert (raised.value.code, raised.value.status) == (401, "UNAUTHENTICATED")
    assert "x-goog-api-key" in str(raised.value.message)
    assert "?key=" in str(raised.value.message)


@pytest.mark.parametrize("version", ["v1", "v1beta"])
def test_paths_under_models_get_googles_404_and_a_wrong_method_a_405(version: str) -> None:
    with ScriptedGemini(api_key=KEY) as up, proxy_for(up, "gemini") as proxy:
        client = _client(proxy, version=version)
        with pytest.raises(errors.ClientError) as missing:
            client.models.get(model=MODEL)  # GET models/{name}: not served
        bare = httpx.get(f"{root(proxy)}/{version}/models/{MODEL}/x", params={"key": TOKEN})
        url = f"{root(proxy)}/{version}/models/{MODEL}:generateContent"
        wrong = [httpx.request(m, url, headers={"x-goog-api-key": TOKEN}) for m in ("GET", "PUT")]
    assert (missing.value.code, missing.value.status) == (404, "NOT_FOUND")
    if version == "v1beta":  # under /v1beta its path says whose it is, header or not
        assert bare.status_code == 404 and bare.json()["error"]["status"] == "NOT_FOUND"
    for answer in wrong:
        assert answer.status_code == 405 and answer.headers["allow"] == "POST"
        assert answer.json()["error"]["status"] == "NOT_FOUND"  # Google's shape
    assert up.requests == []


def test_the_openai_list_of_a_gemini_upstreams_models_has_data() -> None:
    with ScriptedGemini(api_key=KEY) as up, proxy_for(up, "gemini", upstream_key=KEY) as proxy:
        listed = [m.id for m in openai_client(proxy).models.list()]
        client = _client(proxy)  # held: the SDK closes its connections when it is collected
        names = [m.name for m in client.models.list()]
    assert listed == ["gemini-scripted"] and names == ["models/gemini-scripted"]


def test_a_model_name_too_long_for_a_gemini_upstreams_url_is_a_400(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    said: Any = [{"role": "user", "content": "hi"}]
    with (
        ScriptedGemini(api_key=KEY) as up,
        proxy_for(up, "gemini", store, upstream_key=KEY) as proxy,
        pytest.raises(openai.BadRequestError) as raised,
    ):
        openai_client(proxy).chat.completions.create(model="m" * 70_000, messages=said)
    error = raised.value.body
    assert isinstance(error, dict) and error["param"] == "model"
    assert "70,000 characters" in error["message"]
    assert up.requests == [] and sessions(store) == {}


PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def test_well_formed_parts_still_pass(tmp_path: Path) -> None:
    image = types.Part.from_bytes(data=PIXEL, mime_type="image/png")
    asked = types.Content(role="user", parts=[types.Part(text="What is this?"), image])
    config = types.GenerateContentConfig(
        tool_config=types.ToolConfig(
            function_calling_config=types.FunctionCallingConfig(
                mode=types.FunctionCallingConfigMode.NONE
            )
        )
    )
    with ScriptedServer() as up, proxy_for(up, "chat") as proxy:
        client = _client(proxy)
        reply = client.models.generate_content(model="m", contents=[asked], config=config)
    assert reply.text and up.requests[0][1]["tool_choice"] == "none"
