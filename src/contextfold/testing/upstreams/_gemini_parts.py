"""The parts of a scripted Gemini reply, their thought signatures, and the prompt they bill.

A Gemini message (a ``Content``) is a role (``user`` or ``model``) and a list of parts, each
holding one datum: ``text`` (``thought: true`` for a thought summary), ``functionCall``,
``functionResponse``, ``inlineData``, ``fileData``... A part the model wrote may carry a
``thoughtSignature``: an opaque base64 token the client must send back unchanged. The scripted
upstream's signatures name the model that issued them and are sealed with a MAC, so one that is
edited, invented or moved to another model does not verify (:func:`verify`).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import itertools
import json
from typing import Any

__all__ = [
    "SENTINELS",
    "decode_signature",
    "function_call",
    "gemini_prompt",
    "part_text",
    "sign",
    "text",
    "thought",
    "verify",
]

_SECRET = b"contextfold-scripted-gemini"
_MAC = 16
_counter = itertools.count(1)
SENTINELS = frozenset({"skip_thought_signature_validator", "context_engineering_is_the_way_to_go"})
"""The documented dummy signatures the API accepts in place of a real one."""
DATA_FIELDS = {
    "text", "inlineData", "fileData", "functionCall", "functionResponse", "executableCode",
    "codeExecutionResult", "toolCall", "toolResponse",
}  # fmt: skip
"""A part's ``data`` oneof: exactly one is set."""


def text(value: str) -> dict[str, Any]:
    return {"text": value}


def thought(value: str) -> dict[str, Any]:
    """A thought summary (returned only when ``thinkingConfig.includeThoughts`` is set)."""
    return {"text": value, "thought": True}


def function_call(name: str, args: dict[str, Any], *, id: str | None = None) -> dict[str, Any]:
    call: dict[str, Any] = {"name": name, "args": args}
    return {"functionCall": call if id is None else {"id": id, **call}}


def sign(model: str) -> str:
    """A fresh signature issued by ``model`` (standard base64, as the API sends bytes)."""
    payload = f"{model}\0{next(_counter)}".encode()
    mac = hmac.new(_SECRET, payload, hashlib.sha256).digest()[:_MAC]
    return base64.b64encode(payload + mac).decode()


def decode_signature(value: Any) -> bytes | None:
    """The bytes of a ``thoughtSignature`` (standard or URL-safe base64), None if it is not."""
    if not isinstance(value, str):
        return None
    padded = value + "=" * (-len(value) % 4)
    try:
        return base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError):
        return None


def verify(value: str, model: str) -> bool:
    """Whether ``value`` is a signature this upstream issued for ``model`` (or a sentinel)."""
    if value in SENTINELS:
        return True
    raw = decode_signature(value) or b""
    payload, mac = raw[:-_MAC], raw[-_MAC:]
    good = hmac.new(_SECRET, payload, hashlib.sha256).digest()[:_MAC]
    return (
        len(raw) > _MAC
        and hmac.compare_digest(mac, good)
        and payload.split(b"\0")[0] == model.encode()
    )


def part_text(part: dict[str, Any]) -> str:
    """One part as the model reads it (signatures and ids cost nothing; a function response's
    own parts, its images, are read with it)."""
    if "text" in part:
        return str(part["text"])
    for key in ("functionCall", "functionResponse"):
        if isinstance(part.get(key), dict):
            inner = part[key]
            body = inner.get("args") if key == "functionCall" else inner.get("response")
            media = "".join(part_text(p) for p in inner.get("parts") or [] if isinstance(p, dict))
            return f"{inner.get('name')}{json.dumps(body, sort_keys=True)}{media}"
    kept = {k: v for k, v in part.items() if k not in {"thoughtSignature", "thought_signature"}}
    return json.dumps(kept, sort_keys=True)


def _content_text(content: Any, role: str | None = None) -> str:
    if not isinstance(content, dict):
        return ""
    parts = content.get("parts") or []
    body = "".join(part_text(p) for p in parts if isinstance(p, dict))
    return f"{role or content.get('role', 'user')}\n{body}"


def gemini_prompt(body: dict[str, Any]) -> str:
    """The prompt as the implicit cache sees it and bills it: tools, the system instruction,
    then each content under its role."""
    tools = json.dumps(body.get("tools") or [], sort_keys=True)
    system = _content_text(body.get("systemInstruction"), "system")
    contents = body.get("contents") or []
    return "\n".join([tools, system] + [_content_text(c) for c in contents])
