"""How a help screen reads at 80 columns: typer's rich help (panels, wrapped option help), each
value named by its metavar (``--strategy SPEC``), not typer's Python type (``<list[str]>``) or
range (``[x>=1]``), no type on a flag or an argument, and a required argument in the usage line
as click writes it (``PATH...``, not ``{paths}...``). The panels, metavars and short option
help are settings of each option (:mod:`.options` and the command modules).
"""

from __future__ import annotations

from typing import Any

from typer import _click
from typer.core import TyperArgument, TyperGroup, TyperOption

__all__ = ["Group", "PlainHelp", "plain_params"]


class _Argument(TyperArgument):
    def display_type_rich(self, ctx: _click.Context) -> str | None:
        return None

    def _usage_display_name(self) -> str:
        name = self.metavar or self.name.upper()
        if self.nargs != 1 and not name.endswith("..."):
            name += "..."
        return name if self.required else f"[{name}]"


class _Option(TyperOption):
    def display_type_rich(self, ctx: _click.Context) -> str | None:
        if self.is_flag:
            return None
        return super().display_type_rich(ctx)

    def _get_number_range_help_str(self) -> str | None:
        return None  # ``[x>=1]`` beside the metavar: a value out of range is refused by name


def plain_params(params: list[Any]) -> None:
    """Give typer's parameters in ``params`` the help rendering above (in place): typer has no
    setting for it, its parameters being classes of its own, so each gets the subclass above
    once the command is built (what typer renders is otherwise untouched)."""
    for param in params:
        if type(param) is TyperArgument:
            param.__class__ = _Argument
        elif type(param) is TyperOption:
            param.__class__ = _Option


class PlainHelp(_click.Command):
    """A command (or group) whose parameters, ``--help`` and typer's completion options too,
    are rendered as above (on every use: typer adds options after the command is built)."""

    def get_params(self, ctx: _click.Context) -> list[Any]:
        params = super().get_params(ctx)
        plain_params(params)
        return params


class Group(PlainHelp, TyperGroup):
    """The app and ``bench``: their options (``--version``, ``--help``) rendered plainly."""
