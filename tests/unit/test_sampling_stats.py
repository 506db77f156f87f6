"""The chi-square p-value the sampling tests rely on, at known values."""

from __future__ import annotations

import math

import pytest

from sampling_stats import chi2_sf


def test_chi2_sf_known_values():
    # 95 % critical values of the chi-square distribution, and exact cases.
    for critical, dof in [(3.841459, 1), (5.991465, 2), (18.307038, 10), (124.342113, 100)]:
        assert chi2_sf(critical, dof) == pytest.approx(0.05, abs=1e-5)
    assert chi2_sf(2.0, 2) == pytest.approx(math.exp(-1.0), rel=1e-12)
    assert chi2_sf(10.0, 1) == pytest.approx(math.erfc(math.sqrt(5.0)), rel=1e-9)
