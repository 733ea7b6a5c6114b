"""synthdp.checks: the type checks every validating module shares (a boolean is not a number)."""

import math

import numpy as np
import pytest

from synthdp.checks import is_finite_number, is_int


@pytest.mark.parametrize("value", [0, -3, 2**70, np.int64(5), np.uint8(3)])
def test_integers_python_and_numpy_are_integers(value):
    assert is_int(value)


@pytest.mark.parametrize("value", [True, False, np.bool_(True), 1.0, np.float64(2.0), "3", None, [1]])
def test_booleans_floats_and_text_are_not_integers(value):
    assert not is_int(value)


@pytest.mark.parametrize("value", [0, 2.5, -1e300, np.float32(0.5), np.int64(7)])
def test_finite_reals_are_finite_numbers(value):
    assert is_finite_number(value)


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan, np.float64("nan"), True, np.bool_(False), "1", None,
                                   1 + 0j])
def test_infinities_nan_booleans_text_and_complex_are_not(value):
    assert not is_finite_number(value)
