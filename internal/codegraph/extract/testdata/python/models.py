"""Domain models: classes, bases, methods, properties, nested classes."""
import abc
import typing as t
from dataclasses import dataclass, field
from typing import Generic, TypeVar

T = TypeVar("T")


class Base(abc.ABC):
    """A base with an abstract method."""

    registry = {}

    def __init__(self, name):
        self.name = name
        self._validate()

    @abc.abstractmethod
    def area(self):
        ...

    def _validate(self):
        if not self.name:
            raise ValueError("empty name")


class Meta(type):
    def __new__(mcs, name, bases, ns):
        return super().__new__(mcs, name, bases, ns)


class Shape(Base, t.Sized, Generic[T], metaclass=Meta):
    sides = field(default=0)

    def __init__(self, name, sides):
        super().__init__(name)
        self.sides = sides

    @property
    def size(self):
        return self._size

    @size.setter
    def size(self, value):
        self._size = self.clamp(value)

    @size.deleter
    def size(self):
        del self._size

    @staticmethod
    def clamp(value):
        return max(0, min(value, 100))

    class Builder:
        def __init__(self):
            self.parts = []

        def add(self, part):
            self.parts.append(part)
            return self

        class Step(object):
            def run(self):
                return Shape.Builder().add(self)

    def __len__(self):
        return self.sides


@dataclass(frozen=True)
class Point:
    x: float = 0.0
    y: float = field(default_factory=float)

    def dist(self, other: "Point") -> float:
        return ((self.x - other.x) ** 2 + (self.y - other.y) ** 2) ** 0.5


class Pair(typing.NamedTuple, *mixins):
    left: int
    right: int


def make(kind, *args):
    return {"point": Point, "shape": Shape}[kind](*args)
