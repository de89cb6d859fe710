"""What every mechanism shares: the Calibration (noise scale plus its evidence) and Release.

Calibration sees no data and is deterministic; only :meth:`Calibration.release` touches data
and randomness, and it releases through :func:`pufferfish_pgm.noise.add_noise`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Generic

import numpy as np

from .._parallel import chunk_rngs, run_map
from .._validation import positive_finite, positive_int
from ..noise import Release, add_noise
from ..queries import Query
from ..queries._engine import (
    batch_answers,
    coordinate_names,
    encode_rows,
    evaluate,
    evaluate_codes,
    records,
)
from ..quilts import PlanEntry
from ..scenarios import Scenario, ScenarioClass
from ..secrets import Framework
from . import _usefulness
from ._contract import contract
from ._partition import add_noise as noised
from .evidence import Evidence, EvidenceT

__all__ = ["Calibration", "Mechanism"]

#: Users per chunk of a release (each chunk is one task on an executor).
RELEASE_CHUNK = 65_536


def _query_range(query: Query, cls: ScenarioClass) -> float | None:
    """max F − min F of a scalar weighted query (None for vectors and other queries)."""
    table = getattr(query, "weight_table", None)
    if table is None:
        return None
    weights = np.asarray(table(cls), dtype=float)
    return float(np.sum(np.nanmax(weights, axis=1) - np.nanmin(weights, axis=1)))


def _noisy(cal: Calibration, codes: np.ndarray, rng: Any, single: bool,
           per_user: bool) -> Any:
    """The answers on ``codes`` plus calibrated noise (scale 0: the exact answers)."""
    answers = evaluate_codes(cal.framework.scenarios, cal.query, codes)
    if single:
        answers = answers[0]
    elif not per_user:
        answers = answers.sum(axis=0)
    return _with_noise(cal, answers, rng)


def _with_noise(cal: Calibration, answers: Any, rng: Any) -> Any:
    return cal.noisy(answers, rng)


def _chunk_answers(task: tuple) -> Any:
    """The sum of the exact answers of one chunk of records (module level: it must pickle)."""
    cal, rows, first, _ = task
    cls = cal.framework.scenarios
    return evaluate_codes(cls, cal.query, encode_rows(cls, rows, first)).sum(axis=0)


def _noisy_chunk(task: tuple) -> Any:
    """One chunk of records of a per-user release, read, answered and noised where it runs."""
    cal, rows, first, rng = task
    return _noisy(cal, encode_rows(cal.framework.scenarios, rows, first), rng, False, True)


def _one_rng(rng: Any) -> Any:
    """The source of a release drawn in one piece: a SeedSequence gives one Generator."""
    return chunk_rngs(rng, 1)[0]


@dataclass(frozen=True, kw_only=True)
class Calibration(Generic[EvidenceT]):
    """The noise a mechanism needs for a framework and query, with the evidence for it.

    Attributes
    ----------
    mechanism : str
        The mechanism's name (``"MarkovQuilt"``, ``"ExactLaplace"``, ...).
    epsilon : float
        The privacy parameter ε the scale was calibrated for.
    scale : float
        The Laplace scale added to the query as given (to every bar of a histogram); 0 when
        the exact answer is already ε-private.
    query : Query
        The released statistic.
    framework : Framework
        The scenarios and secret pairs the guarantee is for.
    plan : sequence of PlanEntry
        Markov-quilt mechanisms: one :class:`~pufferfish_pgm.quilts.PlanEntry` per secret node
        (a :class:`~pufferfish_pgm.quilts.ChainPlan` for chains); empty otherwise.
    evidence : Evidence
        The facts behind the scale, one record type per mechanism family
        (:mod:`pufferfish_pgm.mechanisms.evidence`): ``QuiltEvidence``, ``ExactEvidence``,
        ``DistanceEvidence``, ``BaselineEvidence``, ``BlowfishEvidence``; a bare ``Evidence()``
        for a calibration made by hand.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.queries import Count
    >>> fw = Framework(MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 3))
    >>> cal = Calibration(mechanism="by hand", epsilon=1.0, scale=2.0, query=Count(1),
    ...                   framework=fw)
    >>> cal.summary(), cal.evidence
    ('by hand: scale 2 for count(1) at ε=1.0', Evidence())
    """

    mechanism: str
    epsilon: float
    scale: float
    query: Query
    framework: Framework
    plan: Sequence[PlanEntry] = ()
    evidence: EvidenceT = field(default_factory=Evidence)  # type: ignore[assignment]

    def answer(self, data: Any) -> np.ndarray:
        """The exact query answer(s) on ``data`` (see
        :func:`pufferfish_pgm.queries._encoding.encode`)."""

        return evaluate(self.framework, self.query, data)

    # partitions (issue 25): the exact kernel per partition and the noise, apart
    def answers(self, batch: Any) -> Any:
        """The exact integer answers per user of a partition (pandas, Arrow or Polars batch;
        per window for windowed queries), with no noise: sum them across partitions for an
        aggregate. See :func:`pufferfish_pgm.queries._encoding.batch_answers` and the guide
        page *Big cohorts*."""
        return batch_answers(self.framework.scenarios, self.query, batch)

    def add_noise(self, answers: Any, rng: Any = None) -> Any:
        """``answers`` (exact, per user or summed) plus this calibration's noise; ``rng=None``
        is secure, a ``SeedSequence`` is this partition's own child (see
        :func:`pufferfish_pgm.mechanisms._partition.add_noise`)."""
        return noised(self, answers, rng)

    def release(self, data: Any, rng: Any = None, *, per_user: bool = True,
                executor: Any = None, chunk_size: int = RELEASE_CHUNK) -> Release:
        """Add calibrated noise to the query answer on ``data``.

        ``data`` is one record (dict node -> state, a sequence of states, a pandas Series) or
        many users (2-D array, list of sequences, DataFrame with one row per user). With many
        users, ``per_user=True`` releases one noisy answer per user and ``per_user=False`` one
        noisy answer for the sum over users (the user must then be the unit of privacy; see the
        docs).

        ``rng=None`` uses the OS's secure randomness. A ``numpy.random.SeedSequence`` makes the
        release reproducible (each chunk of ``chunk_size`` users gets a child of it, so the
        result does not depend on the executor); a seeded ``Generator`` is reproducible too but
        serial only. Seeded noise is not for production. ``executor`` (any
        ``concurrent.futures.Executor``, e.g. a Dask client's ``get_executor()``) releases the
        chunks in parallel; the result equals the serial one.
        """
        cls = self.framework.scenarios
        rows, single = records(cls, data)
        size = positive_int("chunk_size", chunk_size)
        starts = range(0, max(len(rows), 1), size)
        if single or isinstance(rng, np.random.Generator) and executor is None:
            noisy = _noisy(self, encode_rows(cls, rows), _one_rng(rng), single, per_user)
        elif not per_user:   # the sum over users, chunk by chunk, then one draw
            tasks = [(self, rows[i:i + size], i, None) for i in starts]
            total = sum(run_map(_chunk_answers, tasks, executor))
            noisy = _with_noise(self, total, _one_rng(rng))
        else:
            tasks = [(self, rows[i:i + size], i, chunk_rng) for i, chunk_rng
                     in zip(starts, chunk_rngs(rng, len(starts), executor), strict=True)]
            noisy = np.concatenate(run_map(_noisy_chunk, tasks, executor))
        return Release(value=noisy, scale=self.scale, epsilon=self.epsilon,
                       mechanism=self.mechanism, query=self.query.name,
                       coordinates=coordinate_names(cls, self.query))

    def noisy(self, answers: Any, rng: Any = None) -> Any:
        """``answers`` plus this calibration's noise: the one place a release draws noise.

        Laplace(scale) through :func:`~pufferfish_pgm.noise.add_noise`; scale 0 returns the
        answers (the audit proved them ε-private). A calibration whose noise is another law
        (``OptimalCalibration``) overrides this method.
        """
        if self.scale == 0:
            return answers
        return add_noise(answers, self.scale, rng=rng, sensitivity=self.noise_sensitivity())

    def noise_sensitivity(self) -> float:
        """The distance between neighbouring answers that sets the grid of real-valued noise
        (the query's Lipschitz constant; Blowfish uses its policy sensitivity)."""
        return self.query.lipschitz_for(self.framework.scenarios)

    def to_json(self, *, mechanism: Mechanism | None = None) -> str:
        """This calibration as a versioned, fingerprinted JSON certificate.

        Pass the ``mechanism`` that made it to record its parameters too (``verify`` re-plans
        Markov quilts with them). The format is described in ``docs/certificates.md``; read it
        back with :meth:`from_json`.

        Raises
        ------
        CertificateError
            The query or a node/state name cannot be written, or ``mechanism`` is not the
            one that made this calibration.
        """
        from ..certificates import (
            to_json,  # a delegate kept from 0.1.0 (tests/package/test_layers.py)
        )

        return to_json(self, mechanism=mechanism)

    @classmethod
    def from_json(cls, text: str | bytes, framework: Framework) -> Calibration:
        """The calibration a certificate describes, ready to ``release`` without recalibrating.

        The certificate is checked first: its format version, its own fingerprint (an edited
        document is refused), and the fingerprints of ``framework``'s scenarios and secret
        pairs (a different model or pair set is refused, naming the scenario and table).
        ``plan`` is empty and ``evidence`` is a ``CertifiedEvidence`` holding the written
        evidence in JSON types. A certificate of optimal integer noise gives an
        ``OptimalCalibration`` that samples the certified law exactly.

        Raises
        ------
        CertificateError
            With a message that says what differs.
        """
        from ..certificates import from_json  # a delegate kept from 0.1.0

        return from_json(text, framework)  # type: ignore[no-any-return]

    def usefulness(self, data: Any = None) -> _usefulness.Usefulness:
        """E|Z| and the 95 % half-width of the noise, against the answer's spread: the largest
        standard deviation of the answer over the scenarios (or over the rows of ``data``);
        ``useful`` is ``E|Z| <= spread`` (:mod:`~pufferfish_pgm.mechanisms._usefulness`)."""
        return _usefulness.usefulness(self, data)

    def summary(self) -> str:
        """One line: mechanism, scale, query and ε, then any :meth:`notes`."""
        line = f"{self.mechanism}: scale {self.scale:.6g} for {self.query.name} at ε={self.epsilon}"
        return "; ".join([line, *self.notes()])

    def notes(self) -> list[str]:
        """What a user should know before releasing: the noise is as large as group DP's
        (every secret node kept the empty quilt), or larger than the query's whole range, or
        the framework left out secrets that are impossible under every scenario.

        Examples
        --------
        >>> from pufferfish_pgm.scenarios import MarkovChainScenario
        >>> from pufferfish_pgm.secrets import Framework
        >>> from pufferfish_pgm.queries import Count
        >>> from pufferfish_pgm.mechanisms.markov_quilt import MarkovQuiltMechanism
        >>> import warnings
        >>> sticky = MarkovChainScenario([[0.99, 0.01], [0.01, 0.99]], "stationary", 4)
        >>> with warnings.catch_warnings():     # useless, and said: UsefulnessWarning
        ...     warnings.simplefilter("ignore")
        ...     cal = MarkovQuiltMechanism(epsilon=1.0).calibrate(Framework(sticky), Count(1))
        >>> for note in cal.notes():
        ...     print(note[:60])
        no Markov quilt helps: this is the noise of group DP
        the noise scale 4 is at least the query's whole range 4: rel
        >>> days = MarkovChainScenario([[0.5, 0.5], [0.5, 0.5]], [1.0, 0.0], 3)
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     cal = MarkovQuiltMechanism(epsilon=1.0).calibrate(Framework(days), Count(1))
        >>> print(cal.notes()[-1])
        1 secret impossible under every scenario left out of the pairs (nothing to protect): 0=1
        """
        out = []
        trivial = getattr(self.evidence, "trivial_nodes", None)
        if trivial is not None and self.plan and trivial == len(self.plan):
            out.append("no Markov quilt helps: this is the noise of group DP")
        span = _query_range(self.query, self.framework.scenarios)
        if span is not None and self.scale >= span > 0:
            out.append(f"the noise scale {self.scale:.6g} is at least the query's whole range "
                       f"{span:.6g}: releases say little and may fall outside it (clipping "
                       "them is post-processing and keeps the guarantee)")
        skipped = self.framework.skipped_secrets
        if skipped:
            out.append(_skipped_note(skipped))
        return out


def _skipped_note(skipped: tuple) -> str:
    """The note on the secrets the framework left out (the first few named)."""
    shown = ", ".join(f"{v}={s}" for v, s in skipped[:6]) + (", ..." if len(skipped) > 6 else "")
    count = "1 secret" if len(skipped) == 1 else f"{len(skipped)} secrets"
    return (f"{count} impossible under every scenario left out of the pairs (nothing to "
            f"protect): {shown}")


@dataclass(frozen=True, kw_only=True)
class Mechanism(ABC):
    """The contract of a mechanism: a validated, keyword-only ε and :meth:`calibrate`.

    Every mechanism is a frozen dataclass whose fields are keyword-only; ``epsilon`` has no
    default, so ``MarkovQuiltMechanism(0.5, 10)`` and ``MarkovQuiltMechanism()`` raise
    ``TypeError`` instead of silently meaning something else.

    Examples
    --------
    >>> from pufferfish_pgm.mechanisms.baselines import GroupDPMechanism
    >>> GroupDPMechanism(epsilon=0.5).epsilon
    0.5
    >>> GroupDPMechanism(0.5)
    Traceback (most recent call last):
    ...
    TypeError: GroupDPMechanism.__init__() takes 1 positional argument but 2 were given
    """

    epsilon: float

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Every ``calibrate`` checks its arguments and warns on a useless result
        (:func:`._contract.contract`)."""
        super().__init_subclass__(**kwargs)
        if "calibrate" in cls.__dict__:
            cls.calibrate = contract(cls.__dict__["calibrate"])  # type: ignore

    @abstractmethod
    def calibrate(self, framework: Framework, query: Query, *,
                  executor: Any = None) -> Calibration:
        """The noise for ``query`` under ``framework``; sees no data.

        ``executor`` (None: serial) is any ``concurrent.futures.Executor``, e.g. a Dask
        client's ``get_executor()``: the mechanism's expensive loops (per scenario in the exact
        engines, per secret node in the network planner) run there, with results identical to
        the serial run. Mechanisms without such a loop accept it and run as usual.

        The long calibrations (``ExactLaplaceMechanism``, ``OptimalNoiseMechanism``,
        ``ExactQuiltMechanism``) also take a keyword-only ``progress=None``: True for a bar on
        stderr, or a callable ``progress(done, total)`` (:mod:`pufferfish_pgm._progress`).
        Mechanisms whose calibration is fast do not take it (no keyword accepted and ignored).
        """

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", positive_finite("epsilon", self.epsilon))

    @property
    def name(self) -> str:
        """The class name without ``Mechanism`` (``"MarkovQuilt"``, ``"ExactLaplace"``, ...)."""
        return type(self).__name__.removesuffix("Mechanism")

    @staticmethod
    def scale_for(query: Query, scenarios: ScenarioClass | Scenario, sigma: float) -> float:
        """Laplace scale for an L-Lipschitz query from σ computed for L = 1: L·σ.

        For a histogram (L = 2 in L1) this is Laplace(2σ) on every bar.
        """
        return query.lipschitz_for(scenarios) * sigma
