"""synthdp: differentially private synthetic tables for smooth queries."""

from importlib.metadata import PackageNotFoundError, version

from .config import SynthConfig
from .errors import PrivacyLeakWarning, SynthDPError, TestingSeedWarning
from .summary import Summary
from .synthesizer import SmoothSynthesizer

try:
    __version__ = version("synthdp")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.1.0+unknown"

__all__ = ["SmoothSynthesizer", "Summary", "SynthConfig", "SynthDPError", "PrivacyLeakWarning", "TestingSeedWarning", "__version__"]
