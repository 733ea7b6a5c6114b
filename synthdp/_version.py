"""synthdp's version: the one place it is written (pyproject.toml reads it from here).

Modules import the version from here, never from the package face, so that importing one
module does not load the whole pipeline (:mod:`synthdp`'s exports are lazy). A literal rather
than ``importlib.metadata.version("synthdp")``: that lookup cost every command 15 ms of start-up
(importlib.metadata and the email parser it loads), and a source tree that is not installed has
the right version too.
"""

__version__ = "0.1.0"
