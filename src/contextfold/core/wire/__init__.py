"""The providers' wire formats read into core's messages, shared by serve's APIs (which also
write them back) and the importers of the logs agent CLIs keep: a message's layout
(:mod:`.layout`: what its kind cannot say, kept as a part), what media costs (:mod:`.media`), and
each API's content read into messages (:mod:`.anthropic`, :mod:`.responses`, :mod:`.gemini`)."""
