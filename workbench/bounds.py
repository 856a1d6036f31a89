"""One check for every number an option takes: finite, and within its range.

A :class:`Bound` says which values a numeric option takes: an integer or a real number, a low
and a high end, each open or closed. :meth:`Bound.check` refuses NaN, the infinities and every
value outside, naming the option and the range; :meth:`Bound.parse` reads an option's text the
same way. The configuration dataclasses check their numbers in ``__post_init__`` with these
objects (so a notebook gets the same refusal), and the command line builds its argparse types
from the same objects (:func:`workbench.cli.options.number`), so a bad value stops a command
while its arguments are parsed, before any work.

Example::

    RATE = Bound(low=0, low_open=True)
    RATE.check("lr", 5e-5)                 # 5e-05
    RATE.check("lr", float("inf"))         # InputError: lr must be a finite number > 0, not inf
    Bound(low=1, integer=True).parse("-3") # InputError: must be an integer >= 1, not -3
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from workbench.errors import InputError


@dataclass(frozen=True)
class Bound:
    """The values a numeric option takes (``None``: no end on that side)."""

    low: float | None = None  # the low end
    high: float | None = None  # the high end
    low_open: bool = False  # the low end itself is refused (``> low`` rather than ``>= low``)
    high_open: bool = False  # the high end itself is refused
    integer: bool = False  # whole numbers only (a bool is refused too)

    def describe(self) -> str:
        """The range in words: ``"an integer >= 1"``, ``"a finite number in [0, 1)"``."""
        what = "an integer" if self.integer else "a finite number"
        low, high = _show(self.low), _show(self.high)
        if self.low is not None and self.high is not None:
            left, right = "(" if self.low_open else "[", ")" if self.high_open else "]"
            return f"{what} in {left}{low}, {high}{right}"
        if self.low is not None:
            return f"{what} {'>' if self.low_open else '>='} {low}"
        if self.high is not None:
            return f"{what} {'<' if self.high_open else '<='} {high}"
        return what

    def accepts(self, value: object) -> bool:
        """Whether ``value`` is a number this bound allows."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        if self.integer and not isinstance(value, int):
            return False
        if not math.isfinite(value):
            return False
        if self.low is not None and (value <= self.low if self.low_open else value < self.low):
            return False
        return self.high is None or (value < self.high if self.high_open else value <= self.high)

    def check(self, name: str, value: float | None, optional: bool = False) -> float | None:
        """``value`` when this bound allows it (or it is None and ``optional``).

        Raises:
            InputError: ``{name} must be {range}, not {value}``.
        """
        if value is None and optional:
            return None
        if not self.accepts(value):
            raise InputError(f"{name} must be {self.describe()}, not {value!r}")
        return value

    def parse(self, text: str, name: str = "the value") -> int | float:
        """An option's text as the number it means, checked (:meth:`check`).

        Raises:
            InputError: not a number (an integer where one is asked for), or out of range.
        """
        try:
            value: int | float = int(text) if self.integer else float(text)
        except ValueError:
            raise InputError(f"{name} must be {self.describe()}, not {text!r}") from None
        self.check(name, value)
        return value


def _show(end: float | None) -> str:
    return "" if end is None else f"{end:g}"


#: Bounds many options share.
POSITIVE = Bound(low=0, low_open=True)  # a number > 0 (rates, timeouts)
NON_NEGATIVE = Bound(low=0)  # a number >= 0 (weights, norms, minutes)
COUNT = Bound(low=1, integer=True)  # an integer >= 1 (sizes, epochs, workers)
NON_NEGATIVE_INT = Bound(low=0, integer=True)  # an integer >= 0 (0 often means "off")
PROBABILITY = Bound(low=0, high=1, high_open=True)  # dropout and other rates in [0, 1)
SEED = Bound(low=0, high=2**32 - 1, integer=True)  # what every random generator takes
FINITE = Bound()  # any finite number
