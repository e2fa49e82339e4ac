"""What an image or a document costs in tokens, estimated without decoding it.

Providers count an image by its pixels (Anthropic: width x height / 750, the image first
scaled to at most about 1.15 megapixels, so at most about 1,600 tokens). The size is read from
the first bytes of a PNG, GIF or JPEG given inline (base64); anything else (a URL, a file id,
another format, a PDF) is counted at that most.
"""

from __future__ import annotations

import base64
import binascii
import math
import struct
from typing import Any

__all__ = ["MAX_IMAGE_TOKENS", "media_tokens"]

MAX_IMAGE_TOKENS = 1600
_PIXELS_PER_TOKEN = 750
_HEAD = 64 * 1024
"""Base64 characters decoded at most to find a size (a JPEG's frame header may come late)."""


def media_tokens(data: Any) -> int:
    """Tokens of an image or document given as base64 ``data`` (or anything else)."""
    if not isinstance(data, str):
        return MAX_IMAGE_TOKENS
    head = data[: _HEAD - _HEAD % 4]
    try:
        raw = base64.b64decode(head, validate=False)
    except (binascii.Error, ValueError):
        return MAX_IMAGE_TOKENS
    size = _png(raw) or _gif(raw) or _jpeg(raw)
    if size is None:
        return MAX_IMAGE_TOKENS
    width, height = size
    return max(1, min(MAX_IMAGE_TOKENS, math.ceil(width * height / _PIXELS_PER_TOKEN)))


def _png(raw: bytes) -> tuple[int, int] | None:
    if raw[:8] != b"\x89PNG\r\n\x1a\n" or len(raw) < 24:
        return None
    width, height = struct.unpack(">II", raw[16:24])
    return int(width), int(height)


def _gif(raw: bytes) -> tuple[int, int] | None:
    if raw[:6] not in (b"GIF87a", b"GIF89a") or len(raw) < 10:
        return None
    width, height = struct.unpack("<HH", raw[6:10])
    return int(width), int(height)


def _jpeg(raw: bytes) -> tuple[int, int] | None:
    if raw[:2] != b"\xff\xd8":
        return None
    pos = 2
    while pos + 9 < len(raw):
        if raw[pos] != 0xFF:
            return None
        marker, length = raw[pos + 1], int.from_bytes(raw[pos + 2 : pos + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", raw[pos + 5 : pos + 9])
            return int(width), int(height)
        pos += 2 + length
    return None
