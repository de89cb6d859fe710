"""Time-series activity privacy, end to end: event logs in, daily and hourly releases out.

1. The Ordóñez activity logs of two homes (repaired and reported) are cut into 10-minute slots
   with ``pp.sequences_from_events``; one Markov chain per home is learned from its days
   (``ScenarioClass.fit_groups``): the attacker may believe either. Every slot's activity is a
   secret (every pair of activities).
2. How many slots a day went to one activity, per person and day: the noise each mechanism
   needs (each audited exactly), its E|Z| against the answer's spread. It is larger: a
   per-person daily count is useless at ε = 1 (the ``UsefulnessWarning`` says so).
3. What does work, with the advisor's numbers (``pp.advise``): the ε a useful release needs,
   and how many people (a cohort total) or days (a weekly total, days independent under the
   model) must be summed for 10 % error on the total, released with one draw of the same noise.
4. *When* as well as how long: the slots per hour of one activity (``pp.WindowedCount``) for
   14 days, released day after day by ``pp.ContinualRelease`` under a total budget (days are
   independent releases), and a picture of the released hourly profile against the truth.

Run: ``python examples/activity_timeseries.py [FOLDER]`` with the folder of the Ordóñez files
``OrdonezA_ADLs.txt`` and ``OrdonezB_ADLs.txt`` (default ``../shared/data-real``; without them
there, synthetic days run, and the first line on stderr says so), or ``--synthetic``; ``--help``
lists the options. The picture needs matplotlib.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from _activity_data import DataNotFound, load_days  # noqa: E402

import pufferfish_pgm as pp  # noqa: E402

SLOT_MINUTES = 10
ACTIVITY = "Sleeping"
HOURLY = "Spare_Time/TV"
ACTIVITIES = (ACTIVITY, HOURLY)
#: The relative error wanted on a total over people or days.
RELATIVE = 0.1


def main(epsilon: float = 1.0, picture: Path | None = Path("activity_profile.png"),
         folder: Path | None = None, synthetic: bool = False) -> list[tuple[str, float, float]]:
    days, homes, source = load_days(SLOT_MINUTES, folder, synthetic)
    theta = pp.ScenarioClass.fit_groups(days, homes, pseudocount=0.5, initial="stationary")
    print(f"data: {source}; {len(days)} days, {len(theta.nodes)} slots of {SLOT_MINUTES} min, "
          f"{len(theta.states_of(0))} states; one chain per home: {[m.name for m in theta]}")
    framework = pp.Framework(theta)
    query = pp.Count(ACTIVITY)
    rows = []
    for mech in (pp.GroupDPMechanism(epsilon=epsilon), pp.MarkovQuiltMechanism(epsilon=epsilon),
                 pp.WassersteinMechanism(epsilon=epsilon),
                 pp.ExactLaplaceMechanism(epsilon=epsilon)):
        start = time.perf_counter()
        with warnings.catch_warnings():     # said once below, for every mechanism
            warnings.simplefilter("ignore", pp.UsefulnessWarning)
            cal = mech.calibrate(framework, query)
        realised = pp.audit(framework, query, cal.scale).epsilon
        rows.append((mech.name, cal.scale, realised))
        print(f"{mech.name:>14}: Laplace scale {cal.scale:8.3f}  realised eps {realised:.4f}  "
              f"({time.perf_counter() - start:.2f} s)")
    for activity in ACTIVITIES:
        per_person(framework, days, activity, epsilon)
    hourly(framework, days, epsilon, picture=picture)
    return rows


def per_person(framework: pp.Framework, days: list, activity: str, epsilon: float
               ) -> pp.advisor.Advice:
    """What one person's daily count of ``activity`` costs, and what a total over people or
    days costs, from the advisor (each number calibrated)."""
    query = pp.Count(activity)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", pp.UsefulnessWarning)
        cal = pp.ExactLaplaceMechanism(epsilon=epsilon).calibrate(framework, query)
    model, data = cal.usefulness(), cal.usefulness(days)
    print(f"\n{activity}, slots per person and day: true mean {data.mean:.1f} (sd over the "
          f"{len(days)} days {data.spread:.1f}; under the model up to {model.spread:.1f})")
    print(f"  exact Laplace noise: E|Z| {model.mean_abs_error:.1f}, 95% within "
          f"±{model.halfwidth:.0f}" + ("  -> UsefulnessWarning: larger than the answer's spread"
                                       if caught else ""))
    advice = pp.advise(framework, query, epsilon=epsilon, target_relative=RELATIVE)
    print("  " + advice.table().replace("\n", "\n  "))
    exact = advice.rows[-1]
    week = exact.mean_abs_error / (7 * advice.mean)
    by_days = math.ceil((exact.mean_abs_error / data.spread) ** 2)
    print(f"  a total over {exact.cohort} people (or days) has E|Z| <= {RELATIVE:.0%} of its "
          f"mean; a weekly total of one person ({7 * advice.mean:.0f} slots): {week:.0%}")
    print(f"  the total is useful from {exact.useful_from} people against the model's spread, "
          f"from {by_days} against the days' own; one useful person-day needs "
          f"ε = {exact.epsilon_for_target:.2f} (model's spread)")
    release = cal.release(days[0])
    print(f"  day 0: {sum(s == activity for s in days[0])} slots; released {release.value} "
          f"(secure noise)")
    return advice


def hourly(framework: pp.Framework, days: list, epsilon: float, n_days: int = 14,
           picture: Path | None = Path("activity_profile.png")) -> pp.ContinualRelease:
    """Slots per hour of one activity for ``n_days`` days, one release a day, budget shown."""
    query = pp.WindowedCount(HOURLY, 60 // SLOT_MINUTES)
    stream = pp.ContinualRelease(pp.MarkovQuiltMechanism(epsilon=epsilon), framework, query,
                                 horizon=n_days, budget=epsilon)
    released = []
    for day in days[:n_days]:
        stream, rel = stream.release_next(day)
        released.append(rel.value)
    truth = stream.calibration.answer(days[:n_days])
    print(f"{HOURLY} per hour, {n_days} days: Laplace({stream.calibration.scale:.2f}) on each "
          f"hour; {stream.summary()}")
    print("  hour:      " + " ".join(f"{h:>4}" for h in range(0, 24, 3)))
    print("  true mean: " + " ".join(f"{v:4.1f}" for v in truth.mean(axis=0)[::3]))
    print("  released:  " + " ".join(f"{v:4.1f}" for v in np.mean(released, axis=0)[::3]))
    if stream.calibration.evidence.trivial_nodes == len(framework.scenarios.nodes):
        print("  every slot kept the empty quilt: activities here last so long that a slot's "
              "nearby block is the whole day, and the noise is group DP's; fewer secret slots, "
              "a larger epsilon, or totals over many users need less")
    if picture is not None:
        try:
            from pufferfish_pgm.plots import plot_profile

            plot_profile(np.array(released), truth, stream.calibration.scale, picture,
                         [f"{h:02d}h" for h in range(24)], f"{HOURLY}: slots per hour")
            print(f"  picture: {picture}")
        except pp.errors.MissingDependencyError:
            print("  (no picture: matplotlib is not installed)")
    return stream


def run(argv: Sequence[str] | None = None) -> int:
    """The command line: parse ``argv``, run :func:`main`; 2 when the data folder is wrong."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folder", nargs="?", type=Path,
                        help="folder of OrdonezA_ADLs.txt and OrdonezB_ADLs.txt (default: "
                             "../shared/data-real, else synthetic days, said on stderr)")
    parser.add_argument("--synthetic", action="store_true", help="run on synthetic days")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--picture", type=Path, default=Path("activity_profile.png"))
    args = parser.parse_args(argv)
    try:
        main(args.epsilon, args.picture, args.folder, args.synthetic)
    except DataNotFound as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(run())
