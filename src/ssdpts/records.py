"""Typed records to and from JSON-shaped data (the results database, `show --json`, exports).

Results are dataclasses; this module is the one place that turns them into plain data and back, driven
by their type hints (nested dataclasses, `list[T]`, `dict[str, T]`, `T | None`). Unknown keys in stored
data are ignored so an older ssdpts can read what a newer one added; missing keys take the defaults.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from functools import lru_cache
from typing import Any, TypeVar, Union

T = TypeVar("T")


class KeepsStoredForm:
    """A record decoded from stored data that encodes back to exactly that data (`to_dict`), unknown keys and
    key order included: `to_data` gives its stored form, never its fields."""

    def to_dict(self) -> dict:
        raise NotImplementedError


def to_data(obj: Any) -> Any:
    """A dataclass (or a container of them) as JSON-ready data."""
    if isinstance(obj, KeepsStoredForm):
        return obj.to_dict()
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_data(getattr(obj, f.name)) for f in dataclasses.fields(obj) if f.init}
    if isinstance(obj, dict):
        return {str(k): to_data(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_data(v) for v in obj]
    return obj


@lru_cache(maxsize=None)
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def from_data(tp: Any, data: Any) -> Any:
    """Rebuild a value of type `tp` from `to_data` output (tolerant of added and missing keys)."""
    if data is None:
        return None
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        for a in args:   # the first arm that fits: dataclasses want dicts, scalars want scalars
            if dataclasses.is_dataclass(a) and isinstance(data, dict):
                return from_data(a, data)
        return from_data(args[0], data) if len(args) == 1 else data
    if origin is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(from_data(args[0], v) for v in data)
        return tuple(from_data(a, v) for a, v in zip(args, data))
    if origin in (list, typing.Sequence):
        (arg, *_) = typing.get_args(tp) or (Any,)
        return [from_data(arg, v) for v in data]
    if origin in (dict, typing.Mapping):
        key_t, val_t = typing.get_args(tp) or (str, Any)
        return {(int(k) if key_t is int else k): from_data(val_t, v) for k, v in data.items()}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        hints = _hints(tp)
        kw = {f.name: from_data(hints[f.name], data[f.name]) for f in dataclasses.fields(tp)
              if f.init and f.name in data}
        return tp(**kw)
    if tp is float and isinstance(data, int):
        return float(data)
    return data


def _shown(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def type_problem(tp: Any, value: Any, where: str = "") -> str | None:
    """Where a record rebuilt by `from_data` from a user's file does not hold its declared types, as
    "streams[2].ios is '8192', not int", or None. `from_data` is tolerant (stored data ages), so a file a user
    hands in is checked with this before its values are used."""
    here = where or "the document"
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        problems = [type_problem(a, value, where) for a in typing.get_args(tp)]
        return None if None in problems else next(p for p in problems if p)
    if tp is type(None):
        return None if value is None else f"{here} is {_shown(value)}, not empty"
    if tp is Any or isinstance(tp, TypeVar):
        return None
    if origin in (list, tuple, typing.Sequence):
        if not isinstance(value, (list, tuple)):
            return f"{here} is {_shown(value)}, not a list"
        args = [a for a in typing.get_args(tp) if a is not Ellipsis] or [Any]
        return next((p for i, v in enumerate(value)
                     if (p := type_problem(args[min(i, len(args) - 1)], v, f"{where}[{i}]"))), None)
    if origin in (dict, typing.Mapping):
        if not isinstance(value, dict):
            return f"{here} is {_shown(value)}, not a table"
        key_t, val_t = typing.get_args(tp) or (Any, Any)
        return next((p for k, v in value.items()
                     if (p := type_problem(key_t, k, f"{where} key") or type_problem(val_t, v, f"{where}[{k!r}]"))),
                    None)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        if not isinstance(value, tp):
            return f"{here} is {_shown(value)}, not a {tp.__name__} table"
        hints = _hints(tp)
        return next((p for f in dataclasses.fields(tp) if f.init
                     if (p := type_problem(hints[f.name], getattr(value, f.name),
                                           f"{where}.{f.name}" if where else f.name))), None)
    if tp is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif tp is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, tp) if isinstance(tp, type) else True
    return None if ok else f"{here} is {_shown(value)}, not {_KINDS.get(tp, getattr(tp, '__name__', tp))}"


_KINDS = {int: "a whole number", float: "a number", str: "text", bool: "true or false"}
