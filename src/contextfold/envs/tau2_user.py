"""tau2's user simulator, played by any of our models (:class:`Tau2User`).

It is shown what tau2 shows its simulator (the user prompt and the conversation with the roles
flipped), so a live tau2 run here is a tau2 run; give it its own model instance, so that the
agent's and the user's prompt caches stay apart.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from contextfold.core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from contextfold.core.protocols import Model
from contextfold.envs.tau2 import Tau2Env
from contextfold.envs.tau2_trajectory import GREETING, load_tau2

__all__ = ["Tau2User", "user_system_prompt"]

_PROMPT = "{guidelines}\n\n<scenario>\n{instructions}\n</scenario>"
"""tau2's ``user_simulator.SYSTEM_PROMPT`` (a test checks the two agree)."""


def user_system_prompt(env: Tau2Env) -> str:
    """tau2's user-simulator system prompt for the env's task."""
    folder = load_tau2("tau2.utils.utils").DATA_DIR / "tau2" / "user_simulator"
    name = "simulation_guidelines_tools.md" if env.user_tools() else "simulation_guidelines.md"
    guidelines = (folder / name).read_text(encoding="utf-8")
    return _PROMPT.format(guidelines=guidelines, instructions=env.task.instructions)


class Tau2User:
    """Plays the task's customer with ``model``; implements ``UserSimulator``.

    ``max_tool_rounds`` caps the phone-tool calls in one turn; past it the model is asked for a
    message without tools. :attr:`stop_token` is the token that ended the session, if any.

    The prompt: tau2's global guidelines, the tools variant where the user has tools, and the
    task's scenario; the agent's messages are its "user" turns, its own earlier replies its
    "assistant" turns; the agent's tool calls and results are not shown, as in tau2. A reply
    containing ``###STOP###``, ``###TRANSFER###`` or ``###OUT-OF-SCOPE###`` ends the session
    (``respond`` returns None). In telecom the user has tools (their phone): a call runs against
    the same :class:`~contextfold.envs.tau2.Tau2Env` (so the phone and the carrier's database stay
    in sync) and the simulator is asked again; that traffic is logged in the env
    (:attr:`~contextfold.envs.tau2.Tau2Env.user_side`) for the reward and the simulator's later
    prompts, and never enters the agent's history. A run, as tau2 orchestrates it::

        env = Tau2Env("airline", "7")
        user = Tau2User(LocalModel(), env)
        history = History(SystemMessage(env.system_prompt()))
        agent = Agent(model, strategy, env, history=history, user=user)
        result = agent.run(user.respond([]))  # the user answers tau2's greeting
        reward = env.reward(history.messages(), stop=result.stop)
    """

    def __init__(
        self,
        model: Model,
        env: Tau2Env,
        *,
        max_tokens: int | None = None,
        max_tool_rounds: int = 10,
    ) -> None:
        self.model, self.env = model, env
        self.max_tokens, self.max_tool_rounds = max_tokens, max_tool_rounds
        self.system = SystemMessage(user_system_prompt(env))
        base = load_tau2("tau2.user.base")
        self._stops: tuple[str, ...] = (base.STOP, base.TRANSFER, base.OUT_OF_SCOPE)
        self.stop_token: str | None = None
        self.last_reply: str | None = None
        """The simulator's latest text, the stop token included."""
        self.tool_calls = 0
        """Calls to the user's own tools so far."""

    def respond(self, messages: Sequence[Message]) -> str | None:
        """The user's next message to the agent, or None when the user ends the session."""
        position = sum(1 for m in messages if not isinstance(m, SystemMessage))
        chat = self.view(messages)
        tools = self.env.user_tools()
        for _ in range(self.max_tool_rounds):
            reply = self._complete(chat, with_tools=True)
            if not (tools and reply.tool_calls):
                return self._finish(reply)
            traffic: list[Message] = [reply]
            traffic += [ToolMessage(self._run(c), c.id, name=c.name) for c in reply.tool_calls]
            self.env.record_user_side(position, traffic)
            chat += traffic
        return self._finish(self._complete(chat, with_tools=False))

    def view(self, messages: Sequence[Message]) -> list[Message]:
        """What the simulator is shown: its prompt, then the conversation with roles flipped
        and its own tool traffic in place."""
        chat = [m for m in messages if not isinstance(m, SystemMessage)]
        out: list[Message] = [self.system]
        if not chat or not isinstance(chat[0], AssistantMessage):
            out.append(UserMessage(GREETING))
        side = self.env.user_side
        for position, message in enumerate(chat):
            out += side.get(position, ())
            out += _flip(message)
        for position in sorted(p for p in side if p >= len(chat)):
            out += side[position]
        return out

    def _complete(self, chat: Sequence[Message], *, with_tools: bool) -> AssistantMessage:
        tools = self.env.user_tools() if with_tools else []
        return self.model.complete(chat, tools, max_tokens=self.max_tokens).message

    def _run(self, call: ToolCall) -> str:
        self.tool_calls += 1
        try:
            arguments = json.loads(call.arguments or "{}")
        except json.JSONDecodeError as exc:
            return f"Error: the arguments of {call.name} are not valid JSON ({exc})"
        if not isinstance(arguments, dict):
            return f"Error: the arguments of {call.name} must be a JSON object"
        return self.env.call_user_tool(call.name, arguments)

    def _finish(self, reply: AssistantMessage) -> str | None:
        text = reply.content or ""
        self.last_reply = text
        self.stop_token = next((s for s in self._stops if s in text), None)
        return None if self.stop_token is not None else text


def _flip(message: Message) -> list[Message]:
    """A conversation message from the simulator's side (agent tool traffic is not shown)."""
    if isinstance(message, UserMessage):
        return [AssistantMessage(message.content)]
    if isinstance(message, AssistantMessage) and not message.tool_calls:
        return [UserMessage(message.content or "")]
    return []
