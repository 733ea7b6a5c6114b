"""``python -m synthdp``: the ``synthdp`` command (:func:`synthdp.cli.main`), for an environment
whose scripts folder is not on the PATH."""

from synthdp.cli import main

raise SystemExit(main())
