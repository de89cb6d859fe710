"""Pictures: each plot writes a non-empty PNG (matplotlib is a test extra)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import pufferfish_pgm as pp
from pufferfish_pgm.cli import main
from pufferfish_pgm.distributions import DiscreteDistribution
from pufferfish_pgm.plots import plot_privacy_loss, plot_quilt, plot_scale_vs_epsilon
from pufferfish_pgm.scenarios._scenarios import default_model_path

PNG = b"\x89PNG"


def _is_png(path: Path) -> bool:
    return path.is_file() and path.read_bytes()[:4] == PNG and path.stat().st_size > 5000


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_scale_vs_epsilon(tmp_path):
    mc = pp.MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 12)
    out = plot_scale_vs_epsilon(pp.Framework(mc), pp.Count(1), tmp_path / "eps.png",
                                epsilons=[0.5, 1, 2])
    assert _is_png(out)


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_quilt_on_a_network_and_on_a_chain(tmp_path):
    asia = pp.BayesianNetworkScenario.from_file(default_model_path("asia.bif"))
    fw = pp.Framework(asia, pp.secret_pairs(asia, nodes=["lung"]))
    entry = pp.MarkovQuiltMechanism(epsilon=2.0).calibrate(fw, pp.Count("yes")).plan[0]
    assert _is_png(plot_quilt(asia, entry, tmp_path / "asia.png"))
    mc = pp.MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 60)
    cal = pp.MarkovQuiltMechanism(epsilon=1.0).calibrate(
        pp.Framework(mc, pp.secret_pairs(mc, nodes=[30])), pp.Count(1))
    assert _is_png(plot_quilt(mc, cal.plan[0], tmp_path / "chain.png"))


def test_privacy_loss_curve(tmp_path):
    a = DiscreteDistribution.from_dict({0: 0.7, 1: 0.3})
    b = DiscreteDistribution.from_dict({0: 0.2, 1: 0.8})
    assert _is_png(plot_privacy_loss(a, b, 1.0, tmp_path / "loss.png", epsilon=1.0))


@pytest.mark.parametrize("command", ["compare", "plan", "audit"])
def test_cli_plot_option(tmp_path, capsys, command):
    out = tmp_path / f"{command}.png"
    code = main([command, "--length", "12", "--plot", str(out)])
    capsys.readouterr()
    assert code == 0 and _is_png(out)


def _without_matplotlib(monkeypatch) -> None:
    """Make ``import matplotlib`` fail as if the plot extra were not installed."""
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "matplotlib", None)


def test_missing_matplotlib_is_an_import_error_naming_the_extra(tmp_path, monkeypatch):
    _without_matplotlib(monkeypatch)
    a = DiscreteDistribution.from_dict({0: 0.7, 1: 0.3})
    with pytest.raises(ImportError, match=r'pip install "pufferfish_pgm\[plot\]"') as info:
        plot_privacy_loss(a, a, 1.0, tmp_path / "loss.png")
    assert isinstance(info.value, pp.MissingDependencyError)
    assert isinstance(info.value, pp.PufferfishError)
    assert not (tmp_path / "loss.png").exists()


def test_cli_without_matplotlib_exits_2_with_one_line(tmp_path, capsys, monkeypatch):
    _without_matplotlib(monkeypatch)
    code = main(["plan", "--length", "6", "--plot", str(tmp_path / "plan.png")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("error: plots need matplotlib") and "pufferfish_pgm[plot]" in err

