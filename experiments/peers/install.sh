#!/usr/bin/env bash
# Install the peer synthesizers used by experiments/baselines.py into three virtualenvs
# OUTSIDE the repository (they are optional extras of the experiments, not dependencies
# of synthdp, and their pins conflict with synthdp's environment):
#
#   $PEERS_VENV          (default /opt/peers-venv):        smartnoise-synth 1.0.8 (MST, AIM)
#   $PEERS_OPENDP_VENV   (default /opt/peers-venv-opendp): opendp[mbi] 0.16.0 (dp.mbi MST, AIM)
#   $PEERS_DPMM_VENV     (default /opt/peers-venv-dpmm):   dpmm 0.1.9 (SAS; MST, AIM, PrivBayes + PrivTree)
#
# Why two venvs: smartnoise-synth 1.0.8 needs smartnoise-sql 1.0.10, which pins
# opendp<0.15 and pandas<3 (synthdp's environment has opendp 0.16 and pandas 3), while
# OpenDP's own dp.mbi needs opendp 0.16 with mbi==1.1.0 and polars==1.36.1.
# dpmm 0.1.9 pins numpy==1.26.4, pandas==2.1.0, opendp==0.12.1, scikit-learn==1.5.0 and
# Python >=3.10,<3.12, so it gets a third venv; $DPMM_PYTHON (default $PYTHON) must be 3.10/3.11.
#
# smartnoise-synth is installed with --no-deps plus its dependencies except opacus
# (which pulls torch with several GB of CUDA wheels) and pac-synth: those serve only the
# DP-CTGAN/PATE-GAN/aggregate-seeded synthesizers; MST and AIM import neither.
#
# Usage:  bash experiments/peers/install.sh            (all three venvs)
#         PYTHON=python3.11 bash experiments/peers/install.sh
#         DPMM_PYTHON=python3.11 bash experiments/peers/install.sh   (dpmm needs Python < 3.12)
set -euo pipefail
PYTHON=${PYTHON:-python3}
PEERS_VENV=${PEERS_VENV:-/opt/peers-venv}
PEERS_OPENDP_VENV=${PEERS_OPENDP_VENV:-/opt/peers-venv-opendp}
PEERS_DPMM_VENV=${PEERS_DPMM_VENV:-/opt/peers-venv-dpmm}
DPMM_PYTHON=${DPMM_PYTHON:-$PYTHON}

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

"$DPMM_PYTHON" -c "import sys; sys.exit(0 if (3, 10) <= sys.version_info[:2] < (3, 12) else 'dpmm 0.1.9 needs Python 3.10 or 3.11: set DPMM_PYTHON')"
"$DPMM_PYTHON" -m venv "$PEERS_DPMM_VENV"
"$PEERS_DPMM_VENV/bin/python" -m pip install --quiet --upgrade pip
"$PEERS_DPMM_VENV/bin/python" -m pip install --quiet "dpmm==0.1.9"   # with its own pins (numpy 1.26.4, pandas 2.1.0, opendp 0.12.1)
"$PEERS_DPMM_VENV/bin/python" -c "import dpmm.pipelines, opendp, numpy, pandas; from importlib.metadata import version as v; print('peers-venv-dpmm ok: dpmm', v('dpmm'), 'opendp', v('opendp'), 'numpy', numpy.__version__, 'pandas', pandas.__version__)"
