"""Plain CLI values converted without pydantic; everything else is left to typer.

typer (0.2x) converts every option through a pydantic ``TypeAdapter`` it builds when the
command runs, even an option left at its default: importing pydantic and building some
twenty adapters is about a sixth of a whole audit's CPU. Almost every value this CLI gets is
already what its annotation asks for (a string, a list of strings, a default number), or a
string of digits. :class:`PlainCoercionCommand` gives each parameter a
:class:`PlainRuntimeParam` that returns those values unchanged (or as ``int(text)`` /
``float(text)`` inside the declared bounds) and hands every other value (out of range, not
a plain number, an annotation it does not know) to typer's own adapter, so the result and
every error message stay typer's. ``tests/test_cli_coercion.py`` compares both on each
annotation the CLI uses. Hand-written because it is the point: typer offers no way to skip
its adapters. With a typer that has none (it converted through click types before 0.2x),
the two classes are typer's own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from typer.core import TyperCommand, TyperGroup

try:
    from typer._coercion import RuntimeParam, build_runtime_param
    from typer._param_types import coerce_cli_path
    from typer.core import _TyperParameter

    ADAPTERS = True
except ImportError:  # no pydantic adapters to skip
    RuntimeParam, _TyperParameter, ADAPTERS = object, (), False  # type: ignore[misc,assignment]

_INTEGER = re.compile(r"-?[0-9]+")
_DECIMAL = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")
#: Returned when a value is not plain: typer's adapter decides.
UNSURE = object()


def _in_bounds(number: float, parameter_info: Any) -> bool:
    low, high = parameter_info.min, parameter_info.max
    return (low is None or number >= low) and (high is None or number <= high)


def _number(kind: type, value: Any, parameter_info: Any) -> Any:
    if parameter_info.clamp:
        return UNSURE
    if isinstance(value, str):
        if not (_INTEGER if kind is int else _DECIMAL).fullmatch(value):
            return UNSURE
        number = kind(value)
    elif type(value) is kind or (kind is float and type(value) is int):
        number = kind(value)
    else:
        return UNSURE
    return number if _in_bounds(number, parameter_info) else UNSURE


def _plain_path(value: Any, parameter_info: Any, param: Any, ctx: Any) -> Any:
    if parameter_info.path_type is not None:
        return UNSURE
    if isinstance(value, str) and value:
        value = Path(value)
    if not isinstance(value, Path):
        return UNSURE
    # typer's own checks (exists, file_okay, resolve_path…) on a value that is already a Path
    return coerce_cli_path(value, parameter_info, path_type=Path, param=param, ctx=ctx)


def plain_value(annotation: Any, parameter_info: Any, value: Any, param=None, ctx=None) -> Any:
    """``value`` converted to ``annotation`` when that needs no adapter, else :data:`UNSURE`."""
    if parameter_info.parser is not None:
        return UNSURE
    if annotation is str:
        return value if isinstance(value, str) else UNSURE
    if annotation is bool:
        return value if isinstance(value, bool) else UNSURE
    if annotation is int or annotation is float:
        return _number(annotation, value, parameter_info)
    if annotation is Path:
        return _plain_path(value, parameter_info, param, ctx)
    if annotation == list[str]:
        if isinstance(value, (list, tuple)) and all(isinstance(item, str) for item in value):
            return list(value)
        return UNSURE
    return UNSURE


@dataclass(frozen=True)
class PlainRuntimeParam(RuntimeParam):
    """A parameter's conversion: :func:`plain_value`, else typer's adapter (built then)."""

    def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
        plain = plain_value(self.annotation, self.parameter_info, value, param, ctx)
        if plain is not UNSURE:
            return plain
        return build_runtime_param(param.type_descriptor)._coerce_value(value, param, ctx)


def plain_runtime(param: Any) -> None:
    """Give one typer parameter the plain conversion (files keep typer's)."""
    descriptor = param.type_descriptor
    if descriptor.file_annotation is None:
        param._runtime_param = PlainRuntimeParam(
            parameter_info=descriptor.parameter_info, annotation=descriptor.annotation
        )


class _PlainParams:
    """Set on every parameter when the command line is parsed (typer appends its completion
    options to a group after construction, and ``--help`` when it parses)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        for param in self.get_params(ctx):  # type: ignore[attr-defined]
            if isinstance(param, _TyperParameter) and param._runtime_param is None:
                plain_runtime(param)
        return super().parse_args(ctx, args)  # type: ignore[misc]


class PlainCoercionCommand(_PlainParams, TyperCommand):
    """A typer command whose parameters convert plain values without pydantic."""


class PlainCoercionGroup(_PlainParams, TyperGroup):
    """A typer group (its own options: ``--version``, completion) likewise."""


if not ADAPTERS:
    PlainCoercionCommand = TyperCommand  # type: ignore[misc,assignment]
    PlainCoercionGroup = TyperGroup  # type: ignore[misc,assignment]
