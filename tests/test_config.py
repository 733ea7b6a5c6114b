import dataclasses

import pytest

from synthdp.config import SynthConfig
from synthdp.errors import SynthDPError


def test_defaults_are_valid_pure_dp_practical():
    config = SynthConfig()
    assert config.epsilon == 1.0 and config.delta == 0.0
    assert config.noise_kind == "laplace"
    assert config.candidate_kind == "copula"


@pytest.mark.parametrize(
    "keys, message",
    [
        ({"epsilon": 0.0}, "epsilon"),
        ({"epsilon": -1.0}, "epsilon"),
        ({"epsilon": float("inf")}, "epsilon"),
        ({"epsilon": float("nan")}, "epsilon"),
        ({"epsilon": "1"}, "epsilon"),
        ({"epsilon": True}, "epsilon"),
        ({"delta": -1e-9}, "delta"),
        ({"delta": 1.0}, "delta"),
        ({"delta": float("nan")}, "delta"),
        ({"noise": "gaussian"}, "Gaussian noise needs delta > 0"),
        ({"noise": "cauchy", "delta": 1e-6}, "noise must be one of"),
        ({"mode": "exact", "candidates": "pca"}, "leave candidates unset"),
        ({"mode": "exact", "candidates": "hypercube"}, "leave candidates unset"),
        ({"mode": "exact", "n_basis": 5}, "leave n_basis unset"),
        ({"mode": "fast"}, "mode must be one of"),
        ({"candidates": "random"}, "candidates must be one of"),
        ({"smoothness": 0}, "smoothness"),
        ({"smoothness": 2.0}, "smoothness"),
        ({"smoothness": 1001}, "smoothness must be an integer from 1 to 1000"),  # at 10^7: minutes in the theory's sizes
        ({"n_candidates": 0}, "n_candidates"),
        ({"n_basis": 0}, "n_basis"),
        ({"n_basis": "many"}, "n_basis"),
        ({"pca_share": 0.0}, "pca_share"),
        ({"pca_share": 1.0}, "pca_share"),
        ({"pca_components": 0}, "pca_components"),
        ({"pca_iterations": 0}, "pca_iterations"),
        ({"pca_calibration": "theorem"}, "pca_calibration"),
        ({"ellipsoid_radius": "wide"}, "ellipsoid_radius"),
        ({"clip_count_share": 0.5}, "clip_count_share"),
        ({"clip_count_share": -0.1}, "clip_count_share"),
        ({"max_lp_entries": 0}, "max_lp_entries"),
        ({"seed": 1.5}, "seed"),
    ],
)
def test_invalid_configurations_are_refused(keys, message):
    with pytest.raises(SynthDPError, match=message):
        SynthConfig(**keys)


@pytest.mark.parametrize(
    "keys, noise",
    [
        ({"delta": 0.0}, "laplace"),
        ({"delta": 0.0, "noise": "laplace"}, "laplace"),
        ({"delta": 1e-6}, "gaussian"),
        ({"delta": 1e-6, "noise": "laplace"}, "laplace"),
        ({"delta": 1e-6, "noise": "gaussian"}, "gaussian"),
    ],
)
def test_noise_kind(keys, noise):
    assert SynthConfig(**keys).noise_kind == noise


@pytest.mark.parametrize(
    "keys, kind",
    [
        ({}, "copula"),
        ({"candidates": "pca"}, "pca"),
        ({"mode": "exact"}, "grid"),
        ({"mode": "exact", "candidates": "grid"}, "grid"),
        ({"candidates": "hypercube"}, "hypercube"),
        ({"candidates": "grid"}, "grid"),
    ],
)
def test_candidate_kind(keys, kind):
    assert SynthConfig(**keys).candidate_kind == kind


def test_keys_name_the_parameters_and_config_is_frozen():
    config = SynthConfig(epsilon=2, seed=3)
    assert {"epsilon", "delta", "mode", "candidates", "n_basis", "seed"} <= set(SynthConfig.keys())
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.epsilon = 5.0


def test_the_readme_option_table_agrees_with_the_config_and_the_cli():
    """Defaults are written once (SynthConfig); the README's table and the CLI's help follow them."""
    import re
    from pathlib import Path

    from synthdp.cli import build_parser

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `--([a-z-]+)` \| ([^|]+?) \|", readme, flags=re.MULTILINE)
    assert len(rows) >= 10
    defaults = SynthConfig()
    generate = build_parser()._subparsers._group_actions[0].choices["generate"]  # noqa: SLF001
    help_by_flag = {action.option_strings[-1]: action.help for action in generate._actions if action.option_strings}
    for flag, written in rows:
        name = flag.replace("-", "_")
        assert name in SynthConfig.keys(), f"README documents --{flag}, which is not an option"
        default, text = getattr(defaults, name), SynthConfig.__dataclass_fields__[name].metadata["default_text"]
        expected = str(default) if default is not None else text.split(":")[0]  # None: decided at run time
        assert written.strip() == expected, f"README says --{flag} defaults to {written.strip()}, the code {expected}"
        shown = text or default
        assert help_by_flag[f"--{flag}"].endswith(f"(default {shown})"), flag


def test_every_option_has_help_and_the_estimator_takes_every_option():
    import inspect

    from synthdp import SmoothSynthesizer
    from synthdp.config import GROUPS, option_fields

    signature = inspect.signature(SmoothSynthesizer)
    for field in option_fields():
        assert field.metadata["help"] and field.metadata["group"] in GROUPS, field.name
        assert signature.parameters[field.name].default == field.default, field.name


@pytest.mark.parametrize("options", [{"thousands": "."}, {"sep": ";", "decimal": ",", "thousands": ","},
                                     {"thousands": '"'}, {"thousands": "\n"}, {"thousands": ", "}, {"thousands": ""},
                                     {"thousands": "5"}, {"thousands": 1}, {"thousands": "e"}, {"thousands": "E"},
                                     {"thousands": "+"}, {"thousands": "-"}])
def test_a_bad_thousands_separator_is_refused_by_name(options):
    from synthdp.config import CsvFormat

    with pytest.raises(SynthDPError, match="^thousands must be one character other than decimal") as error:
        CsvFormat(**options)
    assert "\n" not in str(error.value)


def test_a_thousands_separator_may_be_the_field_separator_as_pandas_allows():
    """A comma-separated file with quoted "1,234.5" cells: pandas.read_csv(thousands=",") reads them."""
    from synthdp.config import CsvFormat

    assert CsvFormat(thousands=",").thousands == "," and CsvFormat.from_options(";", None, ",", ".").thousands == "."
    assert CsvFormat(thousands="'").thousands == "'" and CsvFormat().thousands is None
