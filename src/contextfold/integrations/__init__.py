"""Adapters for the agent frameworks users already run, each a small module on
:class:`~contextfold.session.Session`: the framework's stored conversation stays whole, and
only its model call sees the strategy's view.

- :mod:`contextfold.integrations.langchain`: a LangChain v1 agent middleware
  (``pip install 'contextfold[langchain]'``);
- :mod:`contextfold.integrations.openai_agents`: a ``RunConfig.call_model_input_filter`` for
  the OpenAI Agents SDK (``contextfold[openai-agents]``);
- :mod:`contextfold.integrations.pydantic_ai`: a PydanticAI capability
  (``contextfold[pydantic-ai]``).

Importing this package loads none of the frameworks; importing an adapter whose framework is
not installed raises an ImportError naming the extra to install.
"""
