import numpy as np
import pandas as pd
import pytest


@pytest.fixture
def clinic_like():
    """A small numeric table with public bounds (integer and continuous columns)."""
    rng = np.random.default_rng(7)
    n = 400
    age = rng.integers(20, 80, n)
    weight = np.round(50 + 0.3 * age + rng.normal(0, 8, n), 1)
    score = rng.beta(2, 5, n)
    frame = pd.DataFrame({"age": age, "weight": weight, "score": score})
    bounds = {"age": {"bounds": [18, 90], "type": "integer"}, "weight": [30, 150], "score": [0, 1]}
    return frame, bounds
