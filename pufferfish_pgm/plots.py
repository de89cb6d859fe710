"""Pictures (matplotlib is an optional extra: ``pip install "pufferfish_pgm[plot]"``).

* :func:`plot_scale_vs_epsilon` — noise scale against ε for each mechanism;
* :func:`plot_quilt` — the Markov quilt of a node on the network (nearby, quilt, remote);
* :func:`plot_privacy_loss` — the privacy-loss curve log p_a(w)/p_b(w) over outputs w;
* :func:`plot_profile` — a released profile (e.g. minutes per hour) against the truth;
* :func:`plot_noise_curves` — the noise's E|Z| against ε per mechanism, with the answer's
  spread (``pp.advise(...).plot``);
* :func:`plot_robustness` — the realised ε of a calibration under beliefs off Θ
  (``pp.robustness``), as a cumulative share against the calibrated ε.

Every function writes a PNG file and returns its path. Without matplotlib they raise
:class:`~pufferfish_pgm.errors.MissingDependencyError` (an ``ImportError``).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .distributions import DiscreteDistribution
from .errors import MissingDependencyError
from .mechanisms._engine import MECHANISM_ORDER, mechanism, quiet
from .queries import Query
from .quilts import PlanEntry
from .scenarios import BayesianNetworkScenario, MarkovChainScenario, Scenario
from .secrets import Framework

__all__ = ["plot_noise_curves", "plot_privacy_loss", "plot_profile", "plot_quilt",
           "plot_robustness", "plot_scale_vs_epsilon"]

COLOURS = {"nearby": "#e8743b", "quilt": "#3b7de8", "remote": "#9aa5b1", "secret": "#c0182a"}


def _pyplot() -> Any:
    """``matplotlib.pyplot`` on the file-only Agg backend (imported here: an optional extra)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as err:
        raise MissingDependencyError(
            "plots need matplotlib, which is not installed; install it with "
            "pip install \"pufferfish_pgm[plot]\""
        ) from err
    return plt


def _save(fig: Any, path: str | Path) -> Path:
    path = Path(path)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    _pyplot().close(fig)
    return path


def plot_scale_vs_epsilon(framework: Framework, query: Query, path: str | Path,
                          epsilons: Sequence[float] | None = None,
                          mechanisms: Sequence[str] | None = None) -> Path:
    """Laplace scale of each mechanism against ε (log-log).

    ``mechanisms`` are command-line names (default: every one but entry DP, which is not
    Pufferfish private under correlation).

    Examples
    --------
    >>> import tempfile
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.queries import Count
    >>> fw = Framework(MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 6))
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     out = plot_scale_vs_epsilon(fw, Count(1), Path(tmp) / "eps.png", epsilons=[0.5, 2],
    ...                                 mechanisms=["group", "mqm"])
    ...     out.name, out.stat().st_size > 0
    ('eps.png', True)
    """

    plt = _pyplot()
    eps = np.geomspace(0.1, 5, 9) if epsilons is None else np.asarray(epsilons, dtype=float)
    names = [m for m in (mechanisms or MECHANISM_ORDER) if m != "entry"]
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for name in names:
        with quiet():   # a comparison across ε: each point is not a release
            scales = [mechanism(name, float(e)).calibrate(framework, query).scale for e in eps]
        ax.plot(eps, scales, marker="o", ms=3, label=name)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("ε")
    ax.set_ylabel(f"Laplace scale for {query.name}")
    ax.set_title("Noise needed for ε-Pufferfish privacy")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return _save(fig, path)


def plot_quilt(scenario: Scenario, entry: PlanEntry, path: str | Path) -> Path:
    """Draw a node's Markov quilt: nearby, quilt and remote nodes in three colours.

    Examples
    --------
    >>> import tempfile
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.secrets import secret_pairs
    >>> from pufferfish_pgm.queries import Count
    >>> from pufferfish_pgm.mechanisms import MarkovQuiltMechanism
    >>> mc = MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 500)
    >>> fw = Framework(mc, secret_pairs(mc, nodes=[250]))
    >>> entry = MarkovQuiltMechanism(epsilon=1.0).calibrate(fw, Count(1)).plan[0]
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     plot_quilt(mc, entry, Path(tmp) / "quilt.png").is_file()
    True
    """
    plt = _pyplot()
    role: dict[Hashable, str] = {v: "remote" for v in entry.remote}
    role.update({v: "nearby" for v in entry.nearby})
    role.update({v: "quilt" for v in entry.quilt})
    role[entry.node] = "secret"
    fig, ax = plt.subplots(figsize=(8, 5.5))
    if isinstance(scenario, MarkovChainScenario):
        _draw_chain(ax, scenario.length, role)
    else:
        _draw_network(ax, scenario, role)
    ax.set_title(f"Markov quilt of {entry.node}: |nearby| = {len(entry.nearby)}, "
                 f"influence {entry.influence:.3g}, σ = {entry.sigma:.3g}")
    handles = [plt.Line2D([], [], marker="o", ls="", color=c, label=k)
               for k, c in COLOURS.items()]
    ax.legend(handles=handles, loc="lower right", fontsize=8)
    return _save(fig, path)


def _draw_network(ax: Any, scenario: BayesianNetworkScenario, role: dict[Hashable, str]) -> None:
    import networkx as nx  # type: ignore[import-untyped]

    graph = nx.DiGraph(scenario.edges())
    graph.add_nodes_from(scenario.nodes)
    pos = nx.kamada_kawai_layout(graph.to_undirected())
    colours = [COLOURS[role.get(v, "remote")] for v in graph.nodes]
    nx.draw_networkx(graph, pos, ax=ax, node_color=colours, node_size=260, font_size=6,
                     arrowsize=8, edge_color="#777777")
    ax.axis("off")


def _draw_chain(ax: Any, length: int, role: dict[Hashable, str]) -> None:
    codes = {"secret": 0, "nearby": 1, "quilt": 2, "remote": 3}
    strip = np.array([codes[role.get(t, "remote")] for t in range(length)])
    from matplotlib.colors import ListedColormap

    cmap = ListedColormap([COLOURS[k] for k in codes])
    ax.imshow(strip[None, :], aspect="auto", cmap=cmap, vmin=0, vmax=3,
              extent=(-0.5, length - 0.5, 0, 1))
    ax.set_yticks([])
    ax.set_xlabel("time step")


def plot_privacy_loss(mu_a: DiscreteDistribution, mu_b: DiscreteDistribution, scale: float,
                      path: str | Path,
                      epsilon: float | None = None, label: str = "") -> Path:
    """The privacy-loss curve log p_a(w)/p_b(w) of F + Laplace(scale) over outputs w.

    ``mu_a`` and ``mu_b`` are the distributions of F under the two secrets
    (:class:`pufferfish_pgm.distributions.DiscreteDistribution`).

    Examples
    --------
    >>> import tempfile
    >>> a = DiscreteDistribution.from_dict({0: 0.7, 1: 0.3})
    >>> b = DiscreteDistribution.from_dict({0: 0.2, 1: 0.8})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     plot_privacy_loss(a, b, 1.0, Path(tmp) / "loss.png", epsilon=1.0).is_file()
    True
    """
    plt = _pyplot()
    lo = min(mu_a.support[0], mu_b.support[0]) - 3 * scale
    hi = max(mu_a.support[-1], mu_b.support[-1]) + 3 * scale
    w = np.linspace(lo, hi, 2001)
    loss = _log_density(mu_a, w, scale) - _log_density(mu_b, w, scale)
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    ax.plot(w, loss, color="#3b7de8", label="log p_a(w) / p_b(w)")
    if epsilon is not None:
        for sign in (1, -1):
            ax.axhline(sign * epsilon, color="#c0182a", ls="--", lw=1)
        ax.text(lo, epsilon, " ε", color="#c0182a", va="bottom")
    ax.set_xlabel("released value w")
    ax.set_ylabel("privacy loss")
    ax.set_title(f"Privacy loss of F + Laplace({scale:.3g}) {label}".strip())
    ax.grid(True, alpha=0.3)
    return _save(fig, path)


def _log_density(mu: DiscreteDistribution, w: np.ndarray, scale: float) -> np.ndarray:
    from scipy.special import logsumexp  # type: ignore[import-untyped]

    terms = np.log(mu.probs)[None, :] - np.abs(w[:, None] - mu.support[None, :]) / scale
    return logsumexp(terms, axis=1) - np.log(2 * scale)


def plot_profile(released: Any, truth: Any, scale: float, path: str | Path,
                 labels: Sequence[str] = (), title: str = "") -> Path:
    """The mean over rows (days) of a released vector against the mean of the true answers.

    ``released`` and ``truth`` are arrays (days × coordinates), e.g. the windows of a
    :class:`~pufferfish_pgm.queries.WindowedCount` released with Laplace(``scale``) on every
    coordinate. The bars show the 95 % range of the mean of n independent Laplace noises (its
    standard deviation is ``sqrt(2) · scale / sqrt(n)``; normal approximation).

    Examples
    --------
    >>> import tempfile
    >>> truth = np.array([[0, 3, 6], [1, 2, 5]])
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     plot_profile(truth + 1, truth, 2.0, Path(tmp) / "p.png").is_file()
    True
    """
    plt = _pyplot()
    released, truth = np.atleast_2d(released), np.atleast_2d(truth)
    x = np.arange(truth.shape[1])
    half = 1.96 * np.sqrt(2.0) * scale / np.sqrt(len(released))
    fig, ax = plt.subplots(figsize=(7.2, 4.0))
    ax.plot(x, truth.mean(axis=0), color="#3b7de8", marker="o", label="true mean")
    ax.errorbar(x, released.mean(axis=0), yerr=half, color="#e8743b", marker="s", ls="none",
                capsize=3, label=f"released mean (Laplace {scale:.3g}), 95 % range")
    if labels:
        ax.set_xticks(x, list(labels), rotation=60, fontsize=7)
    ax.set_ylabel("count per window")
    ax.set_title(title or f"released profile over {len(released)} rows")
    ax.legend(fontsize=8)
    ax.grid(True, alpha=0.3)
    return _save(fig, path)


def plot_noise_curves(curves: Mapping[str, tuple[Sequence[float], Sequence[float]]],
                      path: str | Path, *, spread: float | None = None,
                      target: float | None = None, title: str = "") -> Path:
    """E|Z| of each mechanism's noise against ε (log-log, ``curves``: name -> (ε, E|Z|)), with
    the answer's standard deviation (``spread``) and a ``target`` error as horizontal lines:
    below the spread line a release says more than the model's mean (``pp.advise``).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     out = plot_noise_curves({"GroupDP": ([0.5, 1, 2], [8, 4, 2])}, Path(tmp) / "n.png",
    ...                             spread=3.0)
    ...     out.name, out.stat().st_size > 0
    ('n.png', True)
    """
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for name, (eps, err) in curves.items():
        if len(eps):
            ax.plot(eps, err, marker="o", label=name)
    if spread is not None:
        ax.axhline(spread, color="black", linestyle="--",
                   label=f"answer's standard deviation {spread:.3g}")
    if target is not None and target != spread:
        ax.axhline(target, color="grey", linestyle=":", label=f"target {target:.3g}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("ε")
    ax.set_ylabel("noise E|Z|")
    ax.set_title(title or "noise against ε")
    ax.legend(fontsize=8)
    return _save(fig, path)


def plot_robustness(report: Any, path: str | Path, *, title: str = "") -> Path:
    """The share of beliefs whose realised ε is at most x, against x, for a
    ``pp.robustness`` report, with the calibrated ε as a vertical line: how fast the
    guarantee degrades off Θ (beliefs told apart exactly, ε = inf, are counted in the title).

    Examples
    --------
    >>> import tempfile
    >>> from types import SimpleNamespace
    >>> report = SimpleNamespace(realised=(0.4, 0.9, 1.3), epsilon=1.0, exceed=1 / 3)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     out = plot_robustness(report, Path(tmp) / "r.png")
    ...     out.name, out.stat().st_size > 0
    ('r.png', True)
    """
    plt = _pyplot()
    values = np.sort(np.asarray(report.realised, dtype=float))
    finite = values[np.isfinite(values)]
    share = np.arange(1, len(finite) + 1) / max(len(values), 1)
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    ax.step(finite, share, where="post", label="beliefs off Θ")
    ax.axvline(report.epsilon, color="black", linestyle="--",
               label=f"calibrated ε = {report.epsilon:g}")
    ax.set_xlabel("realised ε")
    ax.set_ylabel("share of beliefs with realised ε ≤ x")
    ax.set_ylim(0, 1.02)
    told = len(values) - len(finite)
    ax.set_title(title or f"{len(values)} beliefs: {100 * report.exceed:.3g}% above ε"
                 + (f", {told} told apart exactly (ε = inf)" if told else ""))
    ax.legend(fontsize=8, loc="lower right")
    return _save(fig, path)
