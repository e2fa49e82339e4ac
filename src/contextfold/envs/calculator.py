"""A safe calculator: arithmetic by walking the Python AST (no ``eval``, no ``exec``).

The tutorial tasks' one tool: a model may send it anything, so whatever is not arithmetic, or
would cost more than arithmetic should, is refused with a message saying what is allowed.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Mapping
from typing import Any, TypeAlias

from contextfold.core.errors import ContextFoldError

__all__ = [
    "FUNCTIONS",
    "MAX_ABS",
    "MAX_LENGTH",
    "CalculatorEnv",
    "CalculatorError",
    "calculate",
    "evaluate",
]

Number: TypeAlias = int | float

MAX_LENGTH = 200
"""Longest expression accepted, in characters."""
MAX_ABS = 10**100
"""Largest magnitude any literal, intermediate value or result may have."""
_MAX_ROUND_DIGITS = 100

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_HINTS: dict[type[ast.AST], str] = {
    ast.BitXor: "'^' is not a power here; write 2**3",
    ast.Compare: "comparisons are not allowed",
    ast.BoolOp: "'and'/'or' are not allowed",
    ast.Tuple: "tuples are not allowed (write 1000, not 1,000)",
    ast.Subscript: "subscripts are not allowed",
    ast.Lambda: "lambdas are not allowed",
}


class CalculatorError(ContextFoldError, ValueError):
    """An expression the calculator refuses or cannot compute; the message says why."""


def _sqrt(x: Number) -> float:
    if x < 0:
        raise CalculatorError(f"sqrt of a negative number ({x}) is not a real number")
    return math.sqrt(x)


def _round(x: Number, ndigits: Number | None = None) -> Number:
    if ndigits is None:
        return round(x)
    if not isinstance(ndigits, int) or abs(ndigits) > _MAX_ROUND_DIGITS:
        raise CalculatorError(
            f"round's digits must be a whole number from -{_MAX_ROUND_DIGITS} to "
            f"{_MAX_ROUND_DIGITS}, got {ndigits}"
        )
    return round(x, ndigits)


FUNCTIONS: dict[str, tuple[Callable[..., Number], int, int | None]] = {
    "abs": (abs, 1, 1),
    "max": (max, 2, None),
    "min": (min, 2, None),
    "round": (_round, 1, 2),
    "sqrt": (_sqrt, 1, 1),
}
"""The callable functions: name -> (function, fewest arguments, most arguments or None)."""


def evaluate(expression: str) -> Number:
    """The value of an arithmetic expression; raises :class:`CalculatorError` if refused.

    Allowed: int and float literals, ``+ - * / // % **``, unary ``+``/``-``, parentheses, and the
    functions :data:`FUNCTIONS` (``abs``, ``max``, ``min``, ``round``, ``sqrt``). Refused with a
    :class:`CalculatorError` that says what was refused and what is allowed: names, attribute
    access, calls to anything else, strings, comparisons, an expression longer than
    :data:`MAX_LENGTH` characters, and any value (literal, intermediate or result) beyond
    :data:`MAX_ABS`; a power whose result would pass that bound is refused before it is computed,
    so ``10**10**10`` costs nothing. In :class:`CalculatorEnv` a refusal becomes an ``error: ...``
    result the model sees, counted as a tool error.
    """
    if not isinstance(expression, str):
        raise CalculatorError(f"the expression must be a string, got {type(expression).__name__}")
    if len(expression) > MAX_LENGTH:
        raise CalculatorError(
            f"the expression has {len(expression)} characters; the limit is {MAX_LENGTH}: "
            "split the computation into smaller steps"
        )
    if not expression.strip():
        raise CalculatorError("the expression is empty; write arithmetic such as 2 * (3 + 4)")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise CalculatorError(
            f"{_clip(expression)!r} is not an arithmetic expression ({type(exc).__name__}); "
            "use numbers, + - * / // % **, parentheses and " + ", ".join(FUNCTIONS)
        ) from None
    return _eval(tree.body)


def _clip(text: str, limit: int = 60) -> str:
    """``text`` shortened for an error message (the model already has the whole of it)."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def calculate(expression: str) -> str:
    """The value of an expression as text: ints exactly, floats to 12 significant digits."""
    value = evaluate(expression)
    if isinstance(value, int):
        return str(value)
    return f"{value:.12g}"


def _eval(node: ast.AST) -> Number:
    if isinstance(node, ast.Constant):
        return _literal(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _eval(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _binary(node.op, _eval(node.left), _eval(node.right))
    if isinstance(node, ast.Call):
        return _call(node)
    raise CalculatorError(_refusal(node))


def _refusal(node: ast.AST) -> str:
    """Why ``node`` is refused, in words the model can act on."""
    if isinstance(node, ast.Name):
        return f"names are not allowed ({node.id!r}); use numbers only"
    if isinstance(node, ast.Attribute):
        return f"attribute access is not allowed (.{node.attr})"
    kind = type(node.op) if isinstance(node, ast.BinOp | ast.UnaryOp) else type(node)
    hint = _HINTS.get(kind, f"{kind.__name__} is not allowed")
    return f"{hint}; use numbers, + - * / // % **, parentheses and " + ", ".join(FUNCTIONS)


def _literal(value: object) -> Number:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CalculatorError(f"only numbers are allowed, got {value!r}")
    return _checked(value)


def _checked(value: object) -> Number:
    """``value`` if it is a real number within :data:`MAX_ABS`; else a refusal."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CalculatorError(f"the result {value!r} is not a real number")
    if isinstance(value, float) and not math.isfinite(value):
        raise CalculatorError(f"the result is not finite ({value})")
    if abs(value) > MAX_ABS:
        raise CalculatorError("a value is too large (the limit is 1e100)")
    return value


def _binary(op: ast.operator, left: Number, right: Number) -> Number:
    if isinstance(op, ast.Pow):
        _check_power(left, right)
    try:
        value = _BINARY[type(op)](left, right)
    except ZeroDivisionError:
        raise CalculatorError("division by zero") from None
    except OverflowError:
        raise CalculatorError("a value is too large (the limit is 1e100)") from None
    return _checked(value)


def _check_power(base: Number, exponent: Number) -> None:
    """Refuse a power whose result would pass :data:`MAX_ABS`, before computing it."""
    if abs(base) <= 1:
        if base == 0 and exponent < 0:
            raise CalculatorError("division by zero (0 to a negative power)")
        return
    if exponent > 0 and exponent * math.log10(abs(base)) > math.log10(MAX_ABS) + 1e-9:
        raise CalculatorError(f"{base} ** {exponent} is too large (the limit is 1e100)")


def _call(node: ast.Call) -> Number:
    if not isinstance(node.func, ast.Name):
        raise CalculatorError(_refusal(node.func))
    name = node.func.id
    if name not in FUNCTIONS:
        raise CalculatorError(
            f"unknown function {name!r}; the functions are: " + ", ".join(FUNCTIONS)
        )
    if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
        raise CalculatorError(f"{name} takes plain positional arguments only")
    function, fewest, most = FUNCTIONS[name]
    if len(node.args) < fewest or (most is not None and len(node.args) > most):
        wanted = f"at least {fewest}" if most is None else f"{fewest} to {most}"
        wanted = f"{fewest}" if fewest == most else wanted
        raise CalculatorError(f"{name} takes {wanted} arguments, got {len(node.args)}")
    args = [_eval(a) for a in node.args]
    try:
        return _checked(function(*args))
    except (TypeError, ValueError, OverflowError) as exc:  # a defense: the checks above hold
        if isinstance(exc, CalculatorError):
            raise
        raise CalculatorError(f"{name} cannot take these arguments ({exc})") from None


_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "calculator",
        "description": (
            "Evaluate an arithmetic expression: numbers, + - * / // % ** and parentheses, "
            "and the functions abs, max, min, round, sqrt. Example: round(1500.24 * 1.0825, 2)."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "expression": {"type": "string", "description": "The expression to evaluate."}
            },
            "required": ["expression"],
        },
    },
}


class CalculatorEnv:
    """An environment with one tool, ``calculator(expression)``.

    Refused expressions raise :class:`CalculatorError` (the agent loop reports and counts it);
    :attr:`log` keeps every ``(expression, result or error text)`` pair, in order.
    """

    def __init__(self) -> None:
        self.log: list[tuple[str, str]] = []

    def tools(self) -> list[dict[str, Any]]:
        """The calculator's OpenAI function-tool schema."""
        return [_TOOL]

    def call(self, name: str, arguments: Mapping[str, Any]) -> str:
        """Run ``calculator``; any other tool name or a missing expression is refused."""
        if name != "calculator":
            raise CalculatorError(f"there is no tool {name!r}; the only tool is 'calculator'")
        expression = arguments.get("expression")
        if not isinstance(expression, str):
            raise CalculatorError("calculator needs a string 'expression', e.g. '2 * (3 + 4)'")
        try:
            result = calculate(expression)
        except CalculatorError as exc:
            self.log.append((expression, f"error: {exc}"))
            raise
        self.log.append((expression, result))
        return result
