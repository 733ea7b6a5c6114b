import json

import numpy as np
import pytest

from synthdp.domain.box import ColumnDomain, Domain, load_bounds_file
from synthdp.errors import SynthDPError

BOUNDS = {"age": {"bounds": [18, 90], "type": "integer"}, "weight": [30.0, 150.0], "score": [0, 1]}
NAMES = ["age", "weight", "score"]


def test_from_bounds_keeps_column_order_types_and_bounds():
    domain = Domain.from_bounds(BOUNDS, NAMES)
    assert domain.names == NAMES
    assert domain.d == 3
    np.testing.assert_array_equal(domain.lower, [18, 30, 0])
    np.testing.assert_array_equal(domain.upper, [90, 150, 1])
    assert [c.integer for c in domain.columns] == [True, False, False]
    assert domain.source == "public"


def test_to_dict_round_trips_through_from_bounds():
    domain = Domain.from_bounds(BOUNDS, NAMES, source="public")
    spec = domain.to_dict()
    assert spec["source"] == "public"
    assert Domain.from_bounds(spec["columns"], NAMES) == domain


@pytest.mark.parametrize(
    "bounds, message",
    [
        ({**BOUNDS, "height": [0, 1]}, "unknown column 'height'"),
        ({"age": [0, 1], "weight": [0, 1]}, "no bounds for column 'score'"),
        ({**BOUNDS, "score": [1, 1]}, "lo < hi"),
        ({**BOUNDS, "score": [2, 1]}, "lo < hi"),
        ({**BOUNDS, "score": [0, float("inf")]}, "finite"),
        ({**BOUNDS, "score": [float("nan"), 1]}, "finite"),
        ({**BOUNDS, "score": ["zero", 1]}, "must be numbers"),
        ({**BOUNDS, "score": [None, 1]}, "must be numbers"),
        ({**BOUNDS, "score": (np.bool_(False), np.bool_(True))}, "must be numbers"),  # as true and false are
        ({**BOUNDS, "score": np.array([[0, 1]])}, "pair"),
        ({**BOUNDS, "score": [0, 1, 2]}, "pair"),
        ({**BOUNDS, "score": 1.0}, "pair"),
        ({**BOUNDS, "score": {"type": "continuous"}}, "pair"),
        ({**BOUNDS, "score": {"bounds": [0, 1], "type": "text"}}, "type 'text'"),
    ],
)
def test_from_bounds_rejects_bad_specs(bounds, message):
    with pytest.raises(SynthDPError, match=message):
        Domain.from_bounds(bounds, NAMES)


def test_a_numpy_array_of_two_numbers_is_a_pair_of_bounds():
    bounds = {**BOUNDS, "score": np.array([0.0, 1.0]), "weight": {"bounds": np.array([30, 150])}}
    assert Domain.from_bounds(bounds, NAMES) == Domain.from_bounds(BOUNDS, NAMES)


def test_reversed_bounds_are_not_called_a_constant_column():
    with pytest.raises(SynthDPError, match="lo < hi") as caught:
        Domain.from_bounds({**BOUNDS, "score": [2, 1]}, NAMES)
    assert "constant" not in str(caught.value)


def test_unit_map_sends_bounds_to_the_cube_corners_and_round_trips():
    domain = Domain.from_bounds(BOUNDS, NAMES)
    rng = np.random.default_rng(0)
    values = domain.lower + rng.random((200, 3)) * (domain.upper - domain.lower)
    unit = domain.to_unit(values)
    # Independent affine map: x -> 2 (x - lo) / (hi - lo) - 1.
    np.testing.assert_allclose(unit, 2 * (values - [18, 30, 0]) / [72, 120, 1] - 1)
    np.testing.assert_allclose(domain.from_unit(unit), values)
    np.testing.assert_allclose(domain.to_unit(np.stack([domain.lower, domain.upper])), [[-1] * 3, [1] * 3])


def test_unit_maps_clip_into_the_box():
    domain = Domain.from_bounds(BOUNDS, NAMES)
    assert np.all(np.abs(domain.to_unit(np.array([[0.0, 1e6, -5.0]]))) <= 1)
    np.testing.assert_allclose(domain.from_unit(np.array([[-3.0, 3.0, 0.0]])), [[18, 150, 0.5]])


def test_integer_column_without_an_integer_in_its_bounds_is_refused():
    """Otherwise decode's clip into [ceil(lo), floor(hi)] = [1, 0] would leave the bounds."""
    with pytest.raises(SynthDPError, match="no integer"):
        ColumnDomain("x", 0.2, 0.8, integer=True)
    assert ColumnDomain("x", 0.2, 1.0, integer=True).upper == 1.0  # one integer is enough


def test_load_bounds_file(tmp_path):
    path = tmp_path / "bounds.json"
    path.write_text(json.dumps(BOUNDS))
    assert load_bounds_file(path) == BOUNDS


@pytest.mark.parametrize(
    "content, message",
    [(None, "does not exist"), ("{not json", "not valid JSON"), ("[1, 2]", "must hold a JSON object")],
)
def test_load_bounds_file_errors_name_the_file(tmp_path, content, message):
    path = tmp_path / "bounds.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(SynthDPError, match=message) as error:
        load_bounds_file(path)
    assert str(path) in str(error.value)
