"""The paper's published Tables 3-6 (Wang et al.), copied from the paper's text
(cited in docs/mechanism.md).

Worst-case absolute ("abs") and relative ("rel") error over 10 000 random sums of 10 Gaussian
kernels, for sigma = 2, 4, 6, 8, 10, averaged over 20 rounds, C = 10^4 candidates; PAM is
left out (no data, see data/README.md). ``time`` is the paper's seconds "with
respect to the worst sigma" (CPLEX, 2010 Xeon), as text: the time cell spans the Abs and Rel
rows and the text extraction reads some of them twice, differently (e.g. "7.5" and "1.0");
both readings are then kept, "7.5 / 1.0".
"""

from __future__ import annotations

#: Table number -> (epsilon, delta, candidate kind).
SETTINGS: dict[int, tuple[float, float, str]] = {
    3: (1.0, 0.0, "pca"),
    4: (1.0, 1e-10, "pca"),
    5: (1.0, 0.0, "hypercube"),
    6: (1.0, 1e-10, "hypercube"),
}

#: Table number -> dataset -> {"abs": [5], "rel": [5], "time": str}.
PAPER_TABLES: dict[int, dict[str, dict]] = {
    3: {
        "crm": {"abs": [0.001, 0.035, 0.033, 0.022, 0.020], "rel": [1.084, 0.256, 0.083, 0.037, 0.027], "time": "1.1"},
        "ctg": {"abs": [0.046, 0.041, 0.027, 0.014, 0.005], "rel": [0.209, 0.063, 0.033, 0.015, 0.006], "time": "1.1"},
        "pks": {"abs": [0.006, 0.007, 0.001, 0.007, 0.004], "rel": [0.059, 0.013, 0.002, 0.008, 0.004], "time": "0.9 / 0.5"},
        "wdbc": {"abs": [0.037, 0.059, 0.039, 0.011, 0.012], "rel": [0.329, 0.110, 0.053, 0.013, 0.014], "time": "1.0"},
    },
    4: {
        "crm": {"abs": [0.001, 0.018, 0.034, 0.020, 0.020], "rel": [0.631, 0.126, 0.083, 0.034, 0.028], "time": "7.5 / 1.0"},
        "ctg": {"abs": [0.042, 0.030, 0.023, 0.014, 0.008], "rel": [0.192, 0.045, 0.028, 0.016, 0.008], "time": "1.1"},
        "pks": {"abs": [0.015, 0.002, 0.003, 0.001, 0.006], "rel": [0.109, 0.003, 0.003, 0.001, 0.007], "time": "1.4"},
        "wdbc": {"abs": [0.045, 0.032, 0.019, 0.018, 0.011], "rel": [0.388, 0.061, 0.026, 0.021, 0.013], "time": "1.2"},
    },
    5: {
        "crm": {"abs": [0.001, 0.028, 0.035, 0.031, 0.031], "rel": [1.721, 0.226, 0.101, 0.051, 0.046], "time": "7.2 / 1.2"},
        "ctg": {"abs": [0.089, 0.075, 0.050, 0.028, 0.017], "rel": [0.796, 0.139, 0.066, 0.033, 0.019], "time": "1.8 / 1.0"},
        "pks": {"abs": [0.071, 0.079, 0.050, 0.027, 0.017], "rel": [0.655, 0.154, 0.068, 0.032, 0.019], "time": "3.4 / 0.4"},
        "wdbc": {"abs": [0.040, 0.062, 0.029, 0.019, 0.015], "rel": [0.309, 0.137, 0.037, 0.022, 0.017], "time": "2.7 / 4.1"},
    },
    6: {
        "crm": {"abs": [0.001, 0.027, 0.041, 0.034, 0.027], "rel": [1.773, 0.258, 0.093, 0.054, 0.039], "time": "14.5 / 14.0"},
        "ctg": {"abs": [0.103, 0.075, 0.042, 0.024, 0.019], "rel": [0.884, 0.140, 0.055, 0.028, 0.021], "time": "2.6 / 2.0"},
        "pks": {"abs": [0.099, 0.086, 0.048, 0.027, 0.022], "rel": [0.924, 0.165, 0.065, 0.032, 0.025], "time": "3.2"},
        "wdbc": {"abs": [0.040, 0.046, 0.040, 0.021, 0.019], "rel": [0.340, 0.099, 0.057, 0.026, 0.021], "time": "3.3"},
    },
}


def published_table(epsilon: float, delta: float, candidates: str) -> int | None:
    """The number of the paper's table with this setting, or None."""
    return next((number for number, setting in SETTINGS.items() if setting == (epsilon, delta, candidates)), None)
