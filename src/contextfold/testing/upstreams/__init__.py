"""Scripted upstreams: one real HTTP server per API, for testing agents and proxies offline.

Public modules, one server and its reply builders each: :mod:`.chat` (OpenAI Chat Completions,
a vLLM-like prefix cache), :mod:`.responses` (OpenAI Responses, stateful, automatic caching),
:mod:`.anthropic` (Anthropic Messages, breakpoint caching), :mod:`.gemini` (Gemini, implicit
caching, thought signatures). Each refuses what its API refuses, in its error shape, and records
every request. The private modules hold the shared HTTP server, caches and billed prompt.
"""
