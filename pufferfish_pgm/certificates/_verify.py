"""Re-proving a calibration certificate: :func:`verify` (``pufferfish_pgm.verify``).

A certificate (:mod:`pufferfish_pgm.certificates._document`) is first checked against the
framework (format, own fingerprint, scenario and pair fingerprints), then its promise is proved
again from scratch, never trusting the recorded evidence:

* every mechanism releases ``F + Laplace(scale)``, so the exact audit of that release at the
  certified scale over the finite class Θ (:func:`pufferfish_pgm.privacy_loss.audit`) says
  whether it is ε-Pufferfish private; a scale of 0 is checked on the noiseless loss;
* the Markov Quilt Mechanisms (MarkovQuilt, MQMApprox) are re-planned with the certified
  parameters and the certified scale must be at least the re-planned one; they are audited
  too when the model is small (at most :data:`AUDIT_NODES` nodes per scenario), since their
  plan is the proof on large ones;
* a certificate of integer noise (``OptimalNoiseMechanism``) is audited on its recorded pmf,
  the law that is sampled (:func:`~pufferfish_pgm.privacy_loss.audit_integer_noise`), and
  when it promises a plain-DP floor ε' the pmf must have
  ``max_z |log f(z)/f(z ± d)| <= ε'`` for every move d one record can cause
  (:func:`~pufferfish_pgm.mechanisms.optimal.dp_shifts`);
* a class drawn from a posterior (``ScenarioClass.from_posterior``, ``docs/posterior.md``) is
  drawn again from the counts the framework's class carries, with the certified prior, draws
  and seed: the counts' fingerprint and every redrawn member's fingerprint must be the
  certified ones, else the coverage statement does not hold (``redrawn=False``).

Examples
--------
>>> from pufferfish_pgm.scenarios import MarkovChainScenario
>>> from pufferfish_pgm.secrets import Framework
>>> from pufferfish_pgm.queries import Count
>>> from pufferfish_pgm.mechanisms import EntryDPMechanism, ExactLaplaceMechanism
>>> fw = Framework(MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 6))
>>> verify(ExactLaplaceMechanism(epsilon=1.0).calibrate(fw, Count(1)).to_json(), fw).holds
True
>>> report = verify(EntryDPMechanism(epsilon=1.0).calibrate(fw, Count(1)).to_json(), fw)
>>> report.holds, report.audited_epsilon > 1.0
(False, True)
>>> from pufferfish_pgm.mechanisms import OptimalNoiseMechanism
>>> report = verify(OptimalNoiseMechanism(epsilon=1.0, dp_epsilon=2.0).calibrate(
...     fw, Count(1)).to_json(), fw)
>>> report.holds, report.audited_epsilon <= 1.0, report.dp_realised <= 2.0
(True, True, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._tolerances import RELATIVE
from ..errors import (
    CertificateError,
    InvalidParameterError,
    ParameterTypeError,
    UnknownNodeError,
    UnknownStateError,
)
from ..mechanisms import (
    Calibration,
    MarkovQuiltMechanism,
    Mechanism,
    MQMApproxMechanism,
    OptimalCalibration,
)
from ..mechanisms._engine import dp_loss, dp_shifts
from ..privacy_loss import audit, audit_integer_noise, noiseless_epsilon
from ..privacy_loss._engine import build_groups, release_layout
from ..scenarios._engine import counts_fingerprint, posterior_of
from ..secrets import Framework
from . import _document, _noise
from ._model import posterior_statement, read_posterior, scenario_json
from ._schema import bounded_int, check, refuse

__all__ = ["AUDIT_NODES", "Verification", "verify"]

#: Markov-quilt certificates are also audited exactly when every scenario has at most this
#: many nodes (the audit of a long chain is the expensive part; the plan is the proof there).
AUDIT_NODES = 200
#: Relative slack for comparing ε and scales (float rounding of the audit, not of privacy).
RTOL = RELATIVE

_QUILT_MECHANISMS: dict[str, type[Mechanism]] = {
    "MarkovQuilt": MarkovQuiltMechanism, "MQMApprox": MQMApproxMechanism}


@dataclass(frozen=True, kw_only=True)
class Verification:
    """The outcome of :func:`verify`.

    Attributes
    ----------
    holds : bool
        Whether the certified release is ε-Pufferfish private for the framework, as re-proved.
    epsilon : float
        The certified ε.
    scale : float
        The certified Laplace scale (NaN for a certificate of integer noise).
    audited_epsilon : float or None
        The realised ε of the exact audit at the certified scale, or of the certified integer
        noise (None: not audited, a Markov-quilt certificate on a large model, proved by
        re-planning).
    replanned_scale : float or None
        Markov-quilt mechanisms: the scale the re-planned quilts need (None otherwise).
    message : str
        One line saying what was checked and the result.
    dp_epsilon, dp_realised : float or None
        Integer noise with a plain-DP floor: the certified ε' and the pmf's
        ``max_z |log f(z)/f(z ± d)|`` over every move d of one record (None otherwise).
    redrawn : bool or None
        A posterior class: whether redrawing it from the counts gave the certified members
        (None: the certificate records no posterior).
    """

    holds: bool
    epsilon: float
    scale: float
    audited_epsilon: float | None
    replanned_scale: float | None
    message: str
    dp_epsilon: float | None = None
    dp_realised: float | None = None
    redrawn: bool | None = None


def _audited(cal: Calibration) -> tuple[float, str]:
    """The realised ε at the certified scale and what the audit covered."""
    fw = cal.framework
    if cal.scale > 0:
        report = audit(fw, cal.query, cal.scale)
        return report.epsilon, report.coverage
    engine, matrix, shift, _ = release_layout(fw, cal.query)
    groups, _ = build_groups(fw, engine, matrix, shift)
    return noiseless_epsilon(groups), "the noiseless release, every scenario of the class"


def _node_name(value: Any, where: str) -> Any:
    """A node name written by ``jsonable`` (tuples became lists) in the model's form."""
    if isinstance(value, dict):
        raise refuse(where, value, "a node name (a string, a number or a list of them)")
    return tuple(_node_name(v, where) for v in value) if isinstance(value, list) else value


def _extra_quilts(value: Any) -> dict:
    """The ``extra_quilts`` parameter (written ``[[node, [quilt, ...]], ...]``) as a dict."""
    where = "mechanism.parameters.extra_quilts"
    out = {}
    for i, item in enumerate(check(value, where, list)):
        if not isinstance(item, list) or len(item) != 2:
            raise refuse(f"{where}[{i}]", item, "a pair [node, list of quilts]")
        quilts = check(item[1], f"{where}[{i}][1]", list)
        out[_node_name(item[0], f"{where}[{i}][0]")] = [
            _node_name(check(q, f"{where}[{i}][1][{j}]", list), f"{where}[{i}][1][{j}]")
            for j, q in enumerate(quilts)]
    return out


def _replanned(cal: Calibration, doc: dict) -> float:
    kind = _QUILT_MECHANISMS[cal.mechanism]
    params = dict(doc["mechanism"]["parameters"] or {})  # an object or null: read() checked
    for key, value in params.items():  # the mechanisms' integers are machine-size
        if isinstance(value, int) and not isinstance(value, bool):
            bounded_int(params, key, -(2**63), 2**63 - 1, at="mechanism.parameters")
    if params.get("extra_quilts") is not None:
        params["extra_quilts"] = _extra_quilts(params["extra_quilts"])
    try:
        mech = kind(epsilon=cal.epsilon, **params)
    except (TypeError, InvalidParameterError) as err:  # TypeError: ParameterTypeError too
        raise CertificateError(f"the certificate's mechanism.parameters are not those of this "
                               f"library's {kind.__name__}: {err}") from None
    try:
        return mech.calibrate(cal.framework, cal.query).scale
    except (InvalidParameterError, ParameterTypeError, UnknownNodeError,
            UnknownStateError) as err:
        raise CertificateError(f"the certificate's mechanism.parameters do not fit the model: "
                               f"{err}") from None


def _verify_noise(cal: OptimalCalibration, doc: dict) -> Verification:
    """Audit the certified pmf and check its DP floor (see the module docstring)."""
    report = audit_integer_noise(cal.framework, cal.query, cal.noise)
    holds = report.epsilon <= cal.epsilon * (1 + RTOL)
    checks = [f"exact audit of the certified pmf: realised ε = {report.epsilon:.6g} "
              f"{'<=' if holds else '>'} ε = {cal.epsilon} over {report.coverage}"]
    dp = _noise.dp_epsilon_of(doc["noise"])
    realised = None
    if dp is not None:
        shifts = dp_shifts(cal.framework, cal.query)
        realised = dp_loss(cal.noise, shifts)
        ok = realised <= dp * (1 + RTOL) and realised < float("inf")
        holds = holds and ok
        moves = ", ".join(map(str, shifts[:6])) + (", ..." if len(shifts) > 6 else "")
        checks.append(f"DP floor: max_z |log f(z)/f(z±d)| over d in {{{moves}}} = "
                      f"{realised:.6g} {'<=' if ok else '>'} dp_epsilon = {dp}")
    message = _message(holds, f"{cal.mechanism} integer noise with E|Z| = "
                              f"{cal.noise.mean_abs:.6g} for {cal.query.name} at "
                              f"ε={cal.epsilon}", checks)
    return Verification(holds=holds, epsilon=cal.epsilon, scale=cal.scale,
                        audited_epsilon=report.epsilon, replanned_scale=None, message=message,
                        dp_epsilon=dp, dp_realised=realised)


def _redrawn(doc: dict, framework: Framework) -> tuple[bool, str] | None:
    """Redraw a certified posterior class from the counts its record carries (see the module);
    None when the certificate records no posterior."""
    certified = read_posterior(doc)
    if certified is None:
        return None
    record = posterior_of(framework.scenarios)
    if record is None:
        raise CertificateError(
            f"the certificate is for a class of {certified['draws']} draws from a posterior "
            "(docs/posterior.md); verify redraws it from the transition counts: build the "
            "framework on ScenarioClass.from_posterior(data, prior=, coverage=, confidence=, "
            "seed=) with the certified options")
    ok = counts_fingerprint(record.counts) == certified["counts_sha256"]
    ok = ok and [scenario_json(i, m)["sha256"] for i, m in enumerate(record.redraw())] == [
        entry["sha256"] for entry in doc["scenarios"]]
    what = (f"posterior class redrawn from the counts ({record.draws} draws, seed "
            f"{record.seed}): ")
    return ok, what + (f"every member matches; {posterior_statement(record)}" if ok else
                       "it is NOT the certified class (other counts or other draws), so the "
                       "coverage statement does not hold")


def _message(holds: bool, promise: str, checks: list[str]) -> str:
    """The verdict on ``promise`` followed by the checks that decided it."""
    verdict = "holds" if holds else "does NOT hold"
    return f"the certified promise {verdict}: {promise}; " + "; ".join(checks)


def verify(text: str | bytes, framework: Framework) -> Verification:
    """Re-prove a calibration certificate for ``framework`` (see the module docstring).

    Raises
    ------
    CertificateError
        The certificate cannot be read against ``framework`` (tampered, another model or
        other pairs, a newer format); a promise that does not hold is *not* an error but
        ``holds=False``.
    """
    doc = _document.parse(text)
    cal = _document.load_document(doc, framework, Calibration)
    if isinstance(cal, OptimalCalibration):
        return _verify_noise(cal, doc)
    eps, scale = cal.epsilon, cal.scale
    checks: list[tuple[bool, str]] = []   # (passed, what it checked)
    redrawn = _redrawn(doc, framework)
    if redrawn is not None:
        checks.append(redrawn)
    replanned = None
    if cal.mechanism in _QUILT_MECHANISMS:
        replanned = _replanned(cal, doc)
        checks.append(_quilt_check(scale, replanned))
    audited = None
    if cal.mechanism not in _QUILT_MECHANISMS or all(
            len(m.nodes) <= AUDIT_NODES for m in framework.scenarios):
        audited, coverage = _audited(cal)
        checks.append(_audit_check(audited, eps, coverage))
    holds = all(ok for ok, _ in checks)
    message = _message(holds, f"{cal.mechanism} scale {scale:.6g} for {cal.query.name} at "
                              f"ε={eps}", [what for _, what in checks])
    return Verification(holds=holds, epsilon=eps, scale=scale, audited_epsilon=audited,
                        replanned_scale=replanned, message=message,
                        redrawn=None if redrawn is None else redrawn[0])


def _quilt_check(scale: float, replanned: float) -> tuple[bool, str]:
    """Whether the certified scale covers the scale of the re-planned Markov quilts."""
    ok = scale >= replanned * (1 - RTOL)
    return ok, (f"re-planned Markov quilts need scale {replanned:.6g} "
                f"({'covered' if ok else 'MORE than certified'})")


def _audit_check(audited: float, eps: float, coverage: str) -> tuple[bool, str]:
    """Whether the exact audit's realised ε is within the certified ε."""
    ok = audited <= eps * (1 + RTOL)
    return ok, (f"exact audit: realised ε = {audited:.6g} "
                f"{'<=' if ok else '>'} ε = {eps} over {coverage}")
