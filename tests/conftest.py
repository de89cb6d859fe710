"""Shared fixtures and the hypothesis profile. Helpers (paths, loaders, strategies) are in
``helpers.py``; brute-force references in ``oracle.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import MODELS_DIR, load_network
from hypothesis import settings

from pufferfish_pgm import BayesianNetworkScenario

# The suite is deterministic by default (CI must not fail on a counterexample found by chance
# on one run and not the next); HYPOTHESIS_PROFILE=explore searches with fresh randomness.
# This is the ONLY place that chooses a profile: test modules may set max_examples per test
# (@settings(max_examples=...)) but never load a profile, derandomize or set a database.
settings.register_profile("deterministic", derandomize=True, deadline=None)
settings.register_profile("explore", max_examples=500, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "deterministic"))

@pytest.fixture(scope="session")
def asia() -> BayesianNetworkScenario:
    return load_network("asia")


@pytest.fixture(scope="session")
def models_dir() -> Path:
    return MODELS_DIR
