"""Units as SSP and FMI define them: exponents of the SI base units, and a factor and offset to SI.

``value_SI = factor * value + offset`` (FMI 2.0 section 2.2.2, SSP 1.0 section 5.3.2); two units
convert into each other when their exponents agree.
"""
from __future__ import annotations

from dataclasses import dataclass

BASE_UNITS = ("kg", "m", "s", "A", "K", "mol", "cd", "rad")


@dataclass(frozen=True)
class Unit:
    """A unit as SSP/FMI define it: SI base-unit exponents, ``value_SI = factor * value + offset``."""

    name: str
    exponents: tuple[int, ...] = (0,) * 8
    factor: float = 1.0
    offset: float = 0.0

    def dimension(self) -> str:
        text = " ".join(f"{b}^{e}" if e != 1 else b for b, e in zip(BASE_UNITS, self.exponents) if e)
        return text or "dimensionless"


def unit_conversion(source: Unit, target: Unit) -> tuple[float, float] | None:
    """(factor, offset) with ``target_value = factor * source_value + offset``; None if the
    dimensions differ."""
    if source.exponents != target.exponents:
        return None
    if source.factor == target.factor and source.offset == target.offset:
        return 1.0, 0.0
    return source.factor / target.factor, (source.offset - target.offset) / target.factor
