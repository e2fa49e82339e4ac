"""Adapters for the agent frameworks users already run, each a small module on
:class:`~contextfold.session.Session`: the framework's stored conversation stays whole, and only
its model call sees the strategy's view.

:mod:`.langchain` (a LangChain v1 middleware), :mod:`.openai_agents` (the Agents SDK's
``call_model_input_filter``), :mod:`.pydantic_ai` (a PydanticAI capability). Importing this
package loads no framework; an adapter whose framework is missing says which extra to install.
"""
