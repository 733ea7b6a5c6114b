import numpy as np
import pandas as pd
import pytest

from synthdp.domain.box import Domain
from synthdp.domain.decode import decode

BOUNDS = {"age": {"bounds": [18, 90], "type": "integer"}, "weight": [30.0, 150.0], "dose": {"bounds": [0.5, 9.5], "type": "integer"}}
NAMES = ["age", "weight", "dose"]


@pytest.fixture
def domain() -> Domain:
    return Domain.from_bounds(BOUNDS, NAMES)


def test_columns_names_order_and_dtypes(domain):
    frame = decode(np.zeros((4, 3)), domain)
    assert list(frame.columns) == NAMES
    assert frame["age"].dtype == np.int64 and frame["dose"].dtype == np.int64
    assert frame["weight"].dtype == np.float64
    assert len(frame) == 4


def test_continuous_columns_round_trip_through_the_unit_cube(domain):
    rng = np.random.default_rng(0)
    values = domain.lower + rng.random((100, 3)) * (domain.upper - domain.lower)
    frame = decode(domain.to_unit(values), domain)
    np.testing.assert_allclose(frame["weight"], values[:, 1])


def test_integer_columns_are_rounded_values_of_the_unit_map(domain):
    rng = np.random.default_rng(1)
    points = rng.uniform(-1, 1, (200, 3))
    frame = decode(points, domain)
    age = 18 + (points[:, 0] + 1) * 36  # independent affine map onto [18, 90]
    np.testing.assert_array_equal(frame["age"], np.round(age))
    assert np.all(np.abs(frame["age"] - age) <= 0.5)
    # Integer round trip: integers mapped to the cube decode to themselves.
    integers = np.column_stack([np.arange(18, 91), np.full(73, 30.0), np.full(73, 1)])
    np.testing.assert_array_equal(decode(domain.to_unit(integers), domain)["age"], np.arange(18, 91))


def test_integer_columns_stay_inside_integer_bounds(domain):
    """dose has bounds [0.5, 9.5]: rounding the ends would give 0 and 10, both out of bounds."""
    frame = decode(np.array([[-1.0, -1.0, -1.0], [1.0, 1.0, 1.0], [5.0, -5.0, 5.0]]), domain)
    assert frame["dose"].tolist() == [1, 9, 9]
    assert frame["age"].tolist() == [18, 90, 90]
    np.testing.assert_allclose(frame["weight"], [30.0, 150.0, 30.0])


def test_decoded_frame_equals_a_hand_built_one(domain):
    frame = decode(np.array([[0.0, 0.5, 0.0]]), domain)
    pd.testing.assert_frame_equal(frame, pd.DataFrame({"age": [54], "weight": [120.0], "dose": [5]}))
