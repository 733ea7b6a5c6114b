"""synthdp: differentially private synthetic tables for smooth queries.

The public names below are loaded lazily (PEP 562): ``import synthdp`` or importing one
submodule (say :mod:`synthdp.postprocess.lp`) loads only what that needs, never the pipeline
or the raw-row reader behind it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from synthdp._version import __version__

_EXPORTS = {
    "SmoothSynthesizer": "synthdp.synthesizer",
    "Condition": "synthdp.pipeline.model",
    "SynthConfig": "synthdp.config",
    "Summary": "synthdp.summaries.smooth",
    "MarginalSummary": "synthdp.summaries.marginal",
    "load_summary": "synthdp.summaries.base",
    "SynthDPError": "synthdp.errors",
    "PrivacyLeakWarning": "synthdp.errors",
    "TestingSeedWarning": "synthdp.errors",
    "ConvergenceWarning": "synthdp.errors",
    "InferenceWarning": "synthdp.errors",
    "infer": "synthdp.evaluation.inference",
}

__all__ = ["Condition", "ConvergenceWarning", "InferenceWarning", "MarginalSummary", "PrivacyLeakWarning", "SmoothSynthesizer", "Summary", "SynthConfig",
           "SynthDPError", "TestingSeedWarning", "__version__", "infer", "load_summary"]

if TYPE_CHECKING:
    from synthdp.config import SynthConfig
    from synthdp.errors import (
        ConvergenceWarning,
        InferenceWarning,
        PrivacyLeakWarning,
        SynthDPError,
        TestingSeedWarning,
    )
    from synthdp.evaluation.inference import infer
    from synthdp.pipeline.model import Condition
    from synthdp.summaries.base import load_summary
    from synthdp.summaries.marginal import MarginalSummary
    from synthdp.summaries.smooth import Summary
    from synthdp.synthesizer import SmoothSynthesizer


def __getattr__(name: str) -> object:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value  # later look-ups skip this function
        return value
    raise AttributeError(f"module 'synthdp' has no attribute '{name}'")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
