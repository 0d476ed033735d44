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


def to_data(obj: Any) -> Any:
    """A dataclass (or a container of them) as JSON-ready data."""
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
