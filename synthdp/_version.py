"""synthdp's version, read once from the installed package metadata.

Modules import the version from here, never from the package face, so that importing one
module does not load the whole pipeline (:mod:`synthdp`'s exports are lazy).
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("synthdp")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.1.0+unknown"
