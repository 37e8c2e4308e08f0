"""The snapshot values' quick `__init__` (`snapshots._quick_init`) builds what dataclass's own would: every field
set from its argument, its default or a fresh one from its factory, in the same order, and the value stays
frozen. Checked for every value class of the module, against a plain dataclass of the same fields."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from a2aconsole.core import snapshots

VALUES = [
    cls
    for _, cls in inspect.getmembers(snapshots, inspect.isclass)
    if dataclasses.is_dataclass(cls) and cls.__module__ == snapshots.__name__
]


def _reference(cls: type) -> type:
    """A dataclass of the same fields, with the `__init__` dataclass writes."""
    return dataclasses.make_dataclass(
        f"Reference{cls.__name__}",
        [
            (f.name, f.type, dataclasses.field(default=f.default, default_factory=f.default_factory))
            for f in dataclasses.fields(cls)
        ],
        frozen=True,
    )


def _values(obj: object) -> list[object]:
    return [getattr(obj, f.name) for f in dataclasses.fields(obj)]  # type: ignore[arg-type]


def test_every_value_class_has_the_quick_init() -> None:
    assert len(VALUES) >= 10
    for cls in VALUES:
        assert cls.__init__.__qualname__ == f"{cls.__qualname__}.__init__", cls
        assert cls.__dataclass_params__.frozen, cls


@pytest.mark.parametrize("cls", VALUES, ids=lambda c: c.__name__)
def test_a_value_is_built_as_dataclass_builds_it_and_stays_frozen(cls: type) -> None:
    reference = _reference(cls)
    assert inspect.signature(cls.__init__).parameters.keys() == inspect.signature(reference.__init__).parameters.keys()
    required = [
        f
        for f in dataclasses.fields(cls)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    ]
    given = [f"arg-{f.name}" for f in required]
    built, expected = cls(*given), reference(*given)
    factories = {f.name for f in dataclasses.fields(cls) if f.default_factory is not dataclasses.MISSING}
    for f, got, want in zip(dataclasses.fields(cls), _values(built), _values(expected), strict=True):
        if f.name in factories:
            assert type(got) is type(want) and got is not getattr(cls(*given), f.name), f.name  # a fresh one each
        else:
            assert got == want, f.name
    every = [f"all-{f.name}" for f in dataclasses.fields(cls)]
    assert _values(cls(*every)) == every
    assert _values(cls(**{f.name: v for f, v in zip(dataclasses.fields(cls), every, strict=True)})) == every
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(built, dataclasses.fields(cls)[0].name, "changed")
    with pytest.raises(TypeError):
        cls(*every, "one too many")


def test_a_field_the_quick_init_cannot_make_is_refused_when_the_class_is_made() -> None:
    for spec in (dataclasses.field(default="", init=False), dataclasses.field(default="", kw_only=True)):
        with pytest.raises(TypeError, match="Odd.b"):

            @snapshots._quick_init
            @dataclasses.dataclass(frozen=True, slots=True)
            class Odd:
                a: str
                b: str = spec
