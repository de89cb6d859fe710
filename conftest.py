"""Doctests of modules whose examples calibrate useless releases on purpose (tiny chains that
show a mechanism's numbers): their ``UsefulnessWarning`` is expected, not an error. Every other
doctest and test keeps ``filterwarnings = error`` (pyproject.toml); test modules mark their
own tests (``pytest.mark.filterwarnings``)."""

from __future__ import annotations

import pytest

#: Doctests (by node id) whose examples are tiny and useless on purpose.
USELESS_EXAMPLES = frozenset({
    "pufferfish_pgm/__init__.py::pufferfish_pgm",
    "pufferfish_pgm/accountant/_accountant.py::pufferfish_pgm.accountant._accountant",
    "pufferfish_pgm/accountant/_accountant.py::"
    "pufferfish_pgm.accountant._accountant.PrivacyAccountant",
    "pufferfish_pgm/accountant/_composition_rules.py::"
    "pufferfish_pgm.accountant._composition_rules.quilt_bound",
    "pufferfish_pgm/accountant/_continual.py::pufferfish_pgm.accountant._continual",
    "pufferfish_pgm/accountant/_records.py::pufferfish_pgm.accountant._records.RecordedRelease",
    "pufferfish_pgm/demos/constraints.py::pufferfish_pgm.demos.constraints",
    "pufferfish_pgm/demos/constraints.py::pufferfish_pgm.demos.constraints.constraint_leakage",
    "pufferfish_pgm/certificates/__init__.py::pufferfish_pgm.certificates",
    "pufferfish_pgm/certificates/_verify.py::pufferfish_pgm.certificates._verify",
    "pufferfish_pgm/mechanisms/baselines.py::pufferfish_pgm.mechanisms.baselines",
    "pufferfish_pgm/mechanisms/baselines.py::"
    "pufferfish_pgm.mechanisms.baselines.GroupDPMechanism",
    "pufferfish_pgm/mechanisms/blowfish.py::pufferfish_pgm.mechanisms.blowfish",
    "pufferfish_pgm/mechanisms/evidence.py::pufferfish_pgm.mechanisms.evidence",
    "pufferfish_pgm/mechanisms/evidence.py::pufferfish_pgm.mechanisms.evidence.BaselineEvidence",
    "pufferfish_pgm/mechanisms/evidence.py::pufferfish_pgm.mechanisms.evidence.BlowfishEvidence",
    "pufferfish_pgm/mechanisms/evidence.py::pufferfish_pgm.mechanisms.evidence.DistanceEvidence",
    "pufferfish_pgm/mechanisms/evidence.py::pufferfish_pgm.mechanisms.evidence.ExactEvidence",
    "pufferfish_pgm/mechanisms/evidence.py::"
    "pufferfish_pgm.mechanisms.evidence.OptimalNoiseEvidence",
    "pufferfish_pgm/mechanisms/evidence.py::pufferfish_pgm.mechanisms.evidence.QuiltEvidence",
    "pufferfish_pgm/mechanisms/exact.py::pufferfish_pgm.mechanisms.exact",
    "pufferfish_pgm/mechanisms/exact_quilt.py::pufferfish_pgm.mechanisms.exact_quilt",
    "pufferfish_pgm/mechanisms/gk16.py::pufferfish_pgm.mechanisms.gk16",
    "pufferfish_pgm/mechanisms/kantorovich.py::pufferfish_pgm.mechanisms.kantorovich",
    "pufferfish_pgm/mechanisms/markov_quilt.py::pufferfish_pgm.mechanisms.markov_quilt",
    "pufferfish_pgm/mechanisms/markov_quilt.py::"
    "pufferfish_pgm.mechanisms.markov_quilt.MQMApproxMechanism",
    "pufferfish_pgm/mechanisms/wasserstein.py::pufferfish_pgm.mechanisms.wasserstein",
})


def pytest_collection_modifyitems(items: list) -> None:
    """The listed doctests expect their examples' UsefulnessWarning."""
    for item in items:
        if item.nodeid in USELESS_EXAMPLES:
            item.add_marker(pytest.mark.filterwarnings(
                "ignore::pufferfish_pgm.errors.UsefulnessWarning"))
