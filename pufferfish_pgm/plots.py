"""Pictures (matplotlib is an optional extra: ``pip install "pufferfish_pgm[plot]"``).

* :func:`plot_scale_vs_epsilon` — noise scale against ε for each mechanism;
* :func:`plot_quilt` — the Markov quilt of a node on the network (nearby, quilt, remote);
* :func:`plot_privacy_loss` — the privacy-loss curve log p_a(w)/p_b(w) over outputs w.

Every function writes a PNG file and returns its path.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .errors import InvalidParameterError
from .mechanisms._registry import MECHANISM_ORDER, mechanism

__all__ = ["plot_privacy_loss", "plot_quilt", "plot_scale_vs_epsilon"]

COLOURS = {"nearby": "#e8743b", "quilt": "#3b7de8", "remote": "#9aa5b1", "secret": "#c0182a"}


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as err:
        raise InvalidParameterError(
            "plots need matplotlib; install it with pip install \"pufferfish_pgm[plot]\""
        ) from err
    return plt


def _save(fig: Any, path: str | Path) -> Path:
    path = Path(path)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    _pyplot().close(fig)
    return path


def plot_scale_vs_epsilon(framework: Any, query: Any, path: str | Path,
                          epsilons: Sequence[float] | None = None,
                          mechanisms: Sequence[str] | None = None) -> Path:
    """Laplace scale of each mechanism against ε (log-log)."""

    plt = _pyplot()
    eps = np.geomspace(0.1, 5, 9) if epsilons is None else np.asarray(epsilons, dtype=float)
    names = [m for m in (mechanisms or MECHANISM_ORDER) if m != "entry"]
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for name in names:
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


def plot_quilt(scenario: Any, entry: Any, path: str | Path) -> Path:
    """Draw a node's Markov quilt: nearby, quilt and remote nodes in three colours."""
    plt = _pyplot()
    role = {v: "remote" for v in entry.remote}
    role.update({v: "nearby" for v in entry.nearby})
    role.update({v: "quilt" for v in entry.quilt})
    role[entry.node] = "secret"
    fig, ax = plt.subplots(figsize=(8, 5.5))
    if hasattr(scenario, "transition"):
        _draw_chain(ax, scenario.length, role)
    else:
        _draw_network(ax, scenario, role)
    ax.set_title(f"Markov quilt of {entry.node}: |nearby| = {len(entry.nearby)}, "
                 f"influence {entry.influence:.3g}, σ = {entry.sigma:.3g}")
    handles = [plt.Line2D([], [], marker="o", ls="", color=c, label=k)
               for k, c in COLOURS.items()]
    ax.legend(handles=handles, loc="lower right", fontsize=8)
    return _save(fig, path)


def _draw_network(ax: Any, scenario: Any, role: dict) -> None:
    import networkx as nx

    graph = nx.DiGraph(scenario.edges())
    graph.add_nodes_from(scenario.nodes)
    pos = nx.kamada_kawai_layout(graph.to_undirected())
    colours = [COLOURS[role.get(v, "remote")] for v in graph.nodes]
    nx.draw_networkx(graph, pos, ax=ax, node_color=colours, node_size=260, font_size=6,
                     arrowsize=8, edge_color="#777777")
    ax.axis("off")


def _draw_chain(ax: Any, length: int, role: dict) -> None:
    codes = {"secret": 0, "nearby": 1, "quilt": 2, "remote": 3}
    strip = np.array([codes[role.get(t, "remote")] for t in range(length)])
    from matplotlib.colors import ListedColormap

    cmap = ListedColormap([COLOURS[k] for k in codes])
    ax.imshow(strip[None, :], aspect="auto", cmap=cmap, vmin=0, vmax=3,
              extent=(-0.5, length - 0.5, 0, 1))
    ax.set_yticks([])
    ax.set_xlabel("time step")


def plot_privacy_loss(mu_a: Any, mu_b: Any, scale: float, path: str | Path,
                      epsilon: float | None = None, label: str = "") -> Path:
    """The privacy-loss curve log p_a(w)/p_b(w) of F + Laplace(scale) over outputs w.

    ``mu_a`` and ``mu_b`` are the distributions of F under the two secrets
    (:class:`pufferfish_pgm.distributions.DiscreteDistribution`).
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


def _log_density(mu: Any, w: np.ndarray, scale: float) -> np.ndarray:
    from scipy.special import logsumexp

    terms = np.log(mu.probs)[None, :] - np.abs(w[:, None] - mu.support[None, :]) / scale
    return logsumexp(terms, axis=1) - np.log(2 * scale)
