"""An attribute computed on its first read and kept in the instance's own dict.

`functools.cached_property` does the same, but before Python 3.12 its first read of an
attribute takes a lock that the attribute's class shares across all its instances: a turn's
views are read once per turn, some thirteen of them, and the lock made each first read
about three times dearer (1.4 against 0.5 µs on this machine class). Without the lock, two
threads reading a new attribute at once may both compute it; every attribute here is a pure
function of state its object never changes after construction (a frozen turn, an argument's
grounds), so both get equal values and either may stay.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar, overload

_T = TypeVar("_T")


class lazy_property(Generic[_T]):
    """`@lazy_property` on a method: the method runs on the attribute's first read, and the
    instance's dict answers every later one (a non-data descriptor, so Python looks there
    first). Works on frozen dataclasses, as `functools.cached_property` does."""

    def __init__(self, compute: Callable[[Any], _T]) -> None:
        self._compute = compute
        self._name = compute.__name__
        self.__doc__ = compute.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> lazy_property[_T]: ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> _T: ...

    def __get__(self, instance: object | None, owner: type | None = None) -> Any:
        if instance is None:
            return self
        value = self._compute(instance)
        instance.__dict__[self._name] = value
        return value
