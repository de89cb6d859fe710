"""Errors raised by pufferfish_pgm.

Every error is a :class:`PufferfishError`; each subclass also inherits the fitting built-in
exception, so ``except ValueError`` keeps working for callers who do not know this library.
Messages name the offending node, state or value and say how to fix it. Warnings (the input
was used but read in a way worth checking) derive from :class:`PufferfishWarning`, a
``UserWarning``.

Examples
--------
>>> from pufferfish_pgm.errors import InvalidParameterError, PufferfishError
>>> try:
...     raise InvalidParameterError("epsilon must be > 0, got -1; pass a positive float")
... except ValueError as err:
...     isinstance(err, PufferfishError)
True
"""

from __future__ import annotations

__all__ = [
    "AmbiguousDateWarning",
    "BudgetExceededError",
    "CertificateError",
    "CompositionError",
    "ImpossibleSecretError",
    "InvalidDataError",
    "InvalidModelError",
    "InvalidParameterError",
    "LimitExceededError",
    "MissingDependencyError",
    "ModelFileError",
    "ModelFileNotFoundError",
    "ParameterTypeError",
    "PufferfishError",
    "PufferfishWarning",
    "ScenarioClassError",
    "SolverError",
    "UnknownNodeError",
    "UnknownStateError",
    "UsefulnessWarning",
]


class PufferfishError(Exception):
    """Root of every error raised on purpose by pufferfish_pgm."""

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return str(self.args[0]) if self.args else self.__class__.__name__


class InvalidModelError(PufferfishError, ValueError):
    """A model is not a valid probability model (bad CPD, non-stochastic matrix, ...)."""


class ModelFileNotFoundError(PufferfishError, FileNotFoundError):
    """A model file does not exist."""


class ModelFileError(PufferfishError, ValueError):
    """A model file exists but cannot be read as BIF, XMLBIF or chain JSON."""


class ScenarioClassError(PufferfishError, ValueError):
    """The members of a scenario class disagree on nodes or states, or the class is empty."""


class UnknownNodeError(PufferfishError, KeyError):
    """A node name that the model does not have."""


class UnknownStateError(PufferfishError, KeyError):
    """A state name that the node does not have."""


class ImpossibleSecretError(PufferfishError, ValueError):
    """A secret has probability zero under every scenario of the class."""


class InvalidParameterError(PufferfishError, ValueError):
    """A numeric parameter (epsilon, scale, length, ...) is out of range."""


class ParameterTypeError(PufferfishError, TypeError):
    """A parameter has the wrong type (for example a string or a bool as epsilon)."""


class InvalidDataError(PufferfishError, ValueError):
    """Data given for release or fitting lies outside the model's domain."""


class LimitExceededError(PufferfishError, ValueError):
    """A computation would exceed a configured size limit (raise the limit to proceed)."""


class CompositionError(PufferfishError, ValueError):
    """A composition of releases whose privacy is not proven was requested."""


class BudgetExceededError(CompositionError):
    """A release would bring the proven total ε of a continual release above its budget.

    A :class:`CompositionError` (and so a ``ValueError``): the composition is proven, but it
    costs more than the user allowed. Raised before any data is read or noise drawn.
    """


class MissingDependencyError(PufferfishError, ImportError):
    """An optional dependency is not installed (the message says which extra to install)."""


class SolverError(PufferfishError, RuntimeError):
    """A linear-program solver failed where it should not (``OptimalNoiseMechanism``: the
    discrete Laplace law is always feasible), or no solution passed the exact audit after
    every tightening; the message says which. Please report it with the model and ε.
    """


class CertificateError(PufferfishError, ValueError):
    """A calibration certificate that cannot be used: tampered, written for another model or
    other secret pairs, of a newer format, or not a certificate at all (the message says which).
    """


class PufferfishWarning(UserWarning):
    """Root of every warning issued by pufferfish_pgm: the input was used, but read in a way the
    caller should check (the message says which value and how to make the reading explicit).
    """


class AmbiguousDateWarning(PufferfishWarning):
    """Dates such as ``01/02/2024`` whose day and month could be swapped, and nothing else in the
    log decides which comes first: they were read month first (``01/02/2024`` is 2 January).
    Write ISO dates (``2024-02-01``) to make the reading explicit.
    """


class UsefulnessWarning(PufferfishWarning):
    """A calibration whose noise is larger than the spread of the answer it hides: its
    expected absolute error E|Z| exceeds the largest standard deviation of the answer over the
    scenarios, so the model's mean alone predicts the answer better than a release would. The
    message gives both numbers; ``pufferfish_pgm.advise`` says what helps (summing users or
    days, a coarser query, a larger ε).
    """
