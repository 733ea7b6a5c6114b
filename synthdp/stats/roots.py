"""Brent's root finder, ported from scipy so that a command need not import scipy.optimize."""

from __future__ import annotations

import math
from collections.abc import Callable

from synthdp.errors import SynthDPError


def brentq(f: Callable[[float], float], xa: float, xb: float, xtol: float = 1e-12,
           rtol: float = 4 * 2.220446049250313e-16, maxiter: int = 100, what: str = "a root search") -> float:
    """A root of ``f`` in [xa, xb] by Brent's method: scipy.optimize.brentq's algorithm
    (scipy/optimize/Zeros/brentq.c), step for step, so the calibrated noise is the same to the
    last bit (a test compares them), without importing scipy.optimize, which costs a command
    0.1 s of start-up (the noise calibration, a mixed table's latent correlations). ``f(xa)`` and
    ``f(xb)`` must have opposite signs; ``what`` names the caller in the error otherwise."""
    xpre, xcur = float(xa), float(xb)
    xblk = fblk = spre = scur = 0.0
    fpre, fcur = f(xpre), f(xcur)
    if fpre == 0:
        return xpre
    if fcur == 0:
        return xcur
    if math.copysign(1, fpre) == math.copysign(1, fcur):
        raise SynthDPError(f"{what} found no sign change: a bug, please report it")
    for _ in range(maxiter):
        if fpre != 0 and fcur != 0 and math.copysign(1, fpre) != math.copysign(1, fcur):
            xblk, fblk = xpre, fpre
            spre = scur = xcur - xpre
        if abs(fblk) < abs(fcur):
            xpre, xcur, xblk = xcur, xblk, xcur
            fpre, fcur, fblk = fcur, fblk, fcur
        delta = (xtol + rtol * abs(xcur)) / 2
        sbis = (xblk - xcur) / 2
        if fcur == 0 or abs(sbis) < delta:
            return xcur
        if abs(spre) > delta and abs(fcur) < abs(fpre):
            # a zero denominator (f flat where it underflows, delta ~ 1e-300) gives C's inf or NaN,
            # which the test below rejects for bisection; here without numpy's warning, to the same step
            if xpre == xblk:
                denominator = fcur - fpre
                stry = -fcur * (xcur - xpre) / denominator if denominator != 0 else math.inf
            else:
                dpre = (fpre - fcur) / (xpre - xcur)
                dblk = (fblk - fcur) / (xblk - xcur)
                denominator = dblk * dpre * (fblk - fpre)
                stry = -fcur * (fblk * dblk - fpre * dpre) / denominator if denominator != 0 else math.inf
            if 2 * abs(stry) < min(abs(spre), 3 * abs(sbis) - delta):
                spre, scur = scur, stry
            else:
                spre = scur = sbis
        else:
            spre = scur = sbis
        xpre, fpre = xcur, fcur
        if abs(scur) > delta:
            xcur += scur
        else:
            xcur += delta if sbis > 0 else -delta
        fcur = f(xcur)
    raise SynthDPError(f"{what} did not converge: a bug, please report it")
