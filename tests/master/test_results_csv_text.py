"""results.csv's text of a block of rows (orchestration/master/observers/results.py, ``_csv_lines``):
every Real reads back to the same double, with the digits of Python's repr (the shortest decimal
that does), whatever path a row takes (orjson, or repr for rows with NaN, infinity or Binary)."""
from __future__ import annotations

import csv
import io
import math
from decimal import Decimal

import numpy as np

from orchestration.master.observers.results import _csv_lines, _csv_value


def _parse(text: str) -> list[list[str]]:
    assert text.endswith("\r\n") and "\r\n\r\n" not in text
    return list(csv.reader(io.StringIO(text, newline="")))


def test_reals_read_back_to_the_same_double_with_reprs_digits():
    rng = np.random.default_rng(7)
    block = rng.standard_normal((200, 50)) * 10.0 ** rng.integers(-300, 300, (200, 50))
    specials = [0.0, -0.0, 5e-324, -2.2250738585072014e-308, 1.7976931348623157e308, 1e-5, 1e-7, 1e16, 1e15,
                0.1 + 0.2, 123456789012345680.0, 1.0, -1.0, 2.5e-8]
    block[0, :len(specials)] = specials
    rows = block.tolist()
    parsed = _parse(_csv_lines(rows, ["Real"] * 50))
    assert len(parsed) == 200
    for row, texts in zip(rows, parsed):
        for x, text in zip(row, texts):
            back = float(text)
            assert back == x and math.copysign(1.0, back) == math.copysign(1.0, x), (x, text)
            # the same decimal number as repr's: both are the shortest that reads back
            assert Decimal(text) == Decimal(repr(x)), (x, text)
            assert "." in text or "e" in text, text        # a Real never looks like an integer


def test_integer_boolean_and_numpy_values_and_non_finite_rows():
    families = ["Real", "Integer", "Boolean", "Real", "Enumeration"]
    rows = [[0.0, 3, True, np.float64(0.25), np.int64(2)],
            [0.1, -7, False, math.nan, 1],
            [0.2, 2**62, np.bool_(True), -math.inf, 0]]
    parsed = _parse(_csv_lines(rows, families, [(1, "Integer"), (2, "Boolean"), (3, "Real"), (4, "Enumeration")]))
    assert parsed[0] == ["0.0", "3", "1", "0.25", "2"]
    assert parsed[1] == ["0.1", "-7", "0", "nan", "1"]
    assert parsed[2] == ["0.2", str(2**62), "1", "-inf", "0"]
    assert [_csv_value(t, f) for t, f in zip(parsed[0], families)] == [0.0, 3, True, 0.25, 2]
    assert rows[0][2] is True and type(rows[0][3]) is np.float64      # the caller's rows are not changed


def test_rows_with_a_binary_column_are_hex():
    parsed = _parse(_csv_lines([[0.5, b"\x01\xff", 1e-7]], ["Real", "Binary", "Real"]))
    assert parsed == [["0.5", "01ff", repr(1e-7)]]
