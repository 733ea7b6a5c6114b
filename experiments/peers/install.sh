#!/usr/bin/env bash
# Install the peer synthesizers used by experiments/baselines.py into two virtualenvs
# OUTSIDE the repository (they are optional extras of the experiments, not dependencies
# of synthdp, and their pins conflict with synthdp's environment):
#
#   $PEERS_VENV          (default /opt/peers-venv):        smartnoise-synth 1.0.8 (MST, AIM)
#   $PEERS_OPENDP_VENV   (default /opt/peers-venv-opendp): opendp[mbi] 0.16.0 (dp.mbi MST, AIM)
#
# Why two venvs: smartnoise-synth 1.0.8 needs smartnoise-sql 1.0.10, which pins
# opendp<0.15 and pandas<3 (synthdp's environment has opendp 0.16 and pandas 3), while
# OpenDP's own dp.mbi needs opendp 0.16 with mbi==1.1.0 and polars==1.36.1.
#
# smartnoise-synth is installed with --no-deps plus its dependencies except opacus
# (which pulls torch with several GB of CUDA wheels) and pac-synth: those serve only the
# DP-CTGAN/PATE-GAN/aggregate-seeded synthesizers; MST and AIM import neither.
#
# Usage:  bash experiments/peers/install.sh            (both venvs)
#         PYTHON=python3.11 bash experiments/peers/install.sh
set -euo pipefail
PYTHON=${PYTHON:-python3}
PEERS_VENV=${PEERS_VENV:-/opt/peers-venv}
PEERS_OPENDP_VENV=${PEERS_OPENDP_VENV:-/opt/peers-venv-opendp}

"$PYTHON" -m venv "$PEERS_VENV"
"$PEERS_VENV/bin/python" -m pip install --quiet --upgrade pip
"$PEERS_VENV/bin/python" -m pip install --quiet --no-deps "smartnoise-synth==1.0.8"
"$PEERS_VENV/bin/python" -m pip install --quiet \
    "smartnoise-sql==1.0.10" "mbi==1.1.0" "jax==0.10.2" "jaxlib==0.10.2" \
    "disjoint-set>=0.9.0,<0.10.0" "Faker>=17.0.0" networkx
"$PEERS_VENV/bin/python" -c "import snsynth, mbi, opendp; from snsynth.mst import MSTSynthesizer; from snsynth.aim import AIMSynthesizer; print('peers-venv ok: smartnoise-synth', __import__('importlib.metadata').metadata.version('smartnoise-synth'), 'opendp', opendp.__version__ if hasattr(opendp, '__version__') else __import__('importlib.metadata').metadata.version('opendp'))"

"$PYTHON" -m venv "$PEERS_OPENDP_VENV"
"$PEERS_OPENDP_VENV/bin/python" -m pip install --quiet --upgrade pip
"$PEERS_OPENDP_VENV/bin/python" -m pip install --quiet "opendp[mbi]==0.16.0" "jax==0.10.2" "jaxlib==0.10.2" pandas
"$PEERS_OPENDP_VENV/bin/python" -c "import opendp.prelude as dp, mbi, polars; print('peers-venv-opendp ok: opendp', __import__('importlib.metadata').metadata.version('opendp'), 'mbi', __import__('importlib.metadata').metadata.version('mbi'), 'polars', polars.__version__)"
