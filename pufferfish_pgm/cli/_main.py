"""Command line: ``pufferfish-pgm {demo,plan,calibrate,release,audit,compare,verify,advise}``.

A thin layer over the public API. Errors in the input print one line on stderr and exit with
code 2 (hints written for Python callers are said as options, :mod:`._wording`); Ctrl-C prints
one line and exits with 130; ``--json`` prints machine-readable output; ``--version`` prints
the installed package's version. Calibrations are not checked for usefulness by the library's
warning; ``calibrate`` and ``release`` print one line under a useless result instead, and
``advise`` says what helps. ``compare`` and ``demo`` keep the rows of the mechanisms that
finished when one fails (its row says why) and exit with 2 only when every mechanism failed.
Parsing the arguments imports no numpy-heavy module (scipy, pandas, pgmpy): the subcommands
are imported after it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from ..errors import PufferfishError
from ._event_options import event_options
from ._wording import cli_words

__all__ = ["main", "run"]

MECHANISMS = ("mqm", "group", "entry", "gk16", "exact-quilt", "wasserstein", "kantorovich",
              "kantorovich-relaxed", "exact", "optimal")


class _UsageError(PufferfishError, ValueError):
    """Bad command-line usage."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2, no usage dump
        raise _UsageError(f"{self.prog}: {message} (see --help)")


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", help="a .bif/.xml network or a chain .json (default: bundled "
                                   "activity chain)")
    p.add_argument("--epsilon", type=float, default=1.0, help="privacy parameter (default 1)")
    p.add_argument("--nodes", help="comma-separated secret nodes (default: all nodes)")
    p.add_argument("--query", help="count:STATE, histogram or linear:STATE=W,STATE=W "
                                   "(default: count of the model's demo state); a count "
                                   "without --query-nodes counts over the nodes that have STATE")
    p.add_argument("--query-nodes", help="comma-separated nodes the query sums over (default: "
                                         "all nodes; --nodes picks the secret nodes)")
    p.add_argument("--renormalize", type=float, default=1e-6,
                   help="rescale CPD columns off by at most this much (default 1e-6)")
    p.add_argument("--length", type=int, help="override the length of a chain model")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--memory-budget", help="the most one table may take, e.g. 2GB (default: "
                   "$PUFFERFISH_PGM_MEMORY_BUDGET, else a quarter of the free memory); bigger "
                   "steps stop with an error instead of exhausting the machine")


#: The subcommands and their help lines, in the order ``--help`` lists them.
COMMANDS = (("demo", "calibrate every mechanism on the bundled activity chain, release a "
                     "sample day, print a table"),
            ("plan", "Markov quilts per secret node"),
            ("calibrate", "noise scale of one mechanism"),
            ("release", "release noisy answers for data in a CSV file, or a private activity "
                        "profile per day from event logs"),
            ("audit", "exact realised epsilon of a Laplace scale or a mechanism"),
            ("compare", "all mechanisms side by side"),
            ("verify", "re-prove a calibration certificate for the model"),
            ("advise", "per mechanism: the noise at this epsilon, the epsilon for a target "
                       "error, the users or days to sum for a relative error on the total"))


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for documentation and tests)."""
    parser = _Parser(prog="pufferfish-pgm", description="Pufferfish privacy for data modelled "
                     "by Bayesian networks and Markov chains.")
    parser.add_argument("--version", action=_Version, help="print the version and exit")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name, text in COMMANDS:
        p = sub.add_parser(name, help=text, description=text)
        _common(p)
        _command_options(name, p)
    return parser


def _command_options(name: str, p: argparse.ArgumentParser) -> None:
    """The options of subcommand ``name`` beyond :func:`_common`, in ``--help`` order."""
    if name in ("calibrate", "release", "audit"):
        p.add_argument("--mechanism", choices=MECHANISMS, default="mqm")
    if name == "calibrate":
        p.add_argument("--out", help="write the calibration certificate (JSON) to this path")
    if name in ("calibrate", "compare"):
        p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                       help="show the progress of long calibrations (exact, optimal, "
                            "exact-quilt) on stderr (default: only when stderr is a terminal)")
    if name == "release":
        _release_options(p)
    if name == "audit":
        p.add_argument("--scale", type=float, help="audit this Laplace scale instead")
    if name == "advise":
        _advise_options(p)
    if name in ("compare", "plan", "audit", "advise"):
        p.add_argument("--plot", help="write a PNG picture to this path")
    if name == "compare":
        _compare_options(p)
    if name == "verify":
        p.add_argument("file", metavar="FILE", help="the certificate (from calibrate --out)")


def _release_options(p: argparse.ArgumentParser) -> None:
    """``release --data`` or ``--events`` (:func:`event_options`), ``--calibration``,
    ``--aggregate`` and ``--seed``; ``--epsilon`` and ``--mechanism`` default to None (given,
    they must agree with ``--calibration``)."""
    p.add_argument("--data", help="CSV: one row per user; columns are nodes (network) "
                                  "or time steps (chain)")
    event_options(p)
    p.add_argument("--calibration", help="release with this certificate's scale (from "
                                         "calibrate --out), without recalibrating")
    p.set_defaults(epsilon=None, mechanism=None)  # given: must agree with --calibration
    p.add_argument("--aggregate", action="store_true",
                   help="one noisy total over users instead of one per user")
    p.add_argument("--seed", type=_seed, help="seeded noise (reproducible, NOT for "
                                              "production): an integer >= 0")


def _compare_options(p: argparse.ArgumentParser) -> None:
    """``compare --mechanisms`` (which rows) and ``--dp-epsilon`` (the optimal+dp row's floor)."""
    p.add_argument("--mechanisms", help="comma-separated rows (default: every mechanism of "
                   "demo); also optimal (optimal integer noise) and optimal+dp (the same with "
                   "a plain-DP floor), which solve an LP: slow on long chains")
    p.add_argument("--dp-epsilon", type=float, help="the DP floor of the optimal+dp row "
                                                    "(default 2 x epsilon)")


def _advise_options(p: argparse.ArgumentParser) -> None:
    """``advise --mechanisms``, ``--target-error`` and ``--target-relative``."""
    p.add_argument("--mechanisms", help="comma-separated mechanisms (default: group,mqm,"
                                        "wasserstein,exact)")
    p.add_argument("--target-error", type=float, help="the E|Z| to reach (default: the "
                                                      "answer's standard deviation)")
    p.add_argument("--target-relative", type=float, default=0.1,
                   help="relative error on a total over users or days (default 0.1)")


def _seed(text: str) -> int:
    """``--seed``: an integer >= 0 (numpy's own message for -1 is not one a user can act on)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--seed must be an integer >= 0, got {text!r}") \
            from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"--seed must be an integer >= 0, got {value}")
    return value


class _Version(argparse.Action):
    """``--version``: the version is looked up only when asked for."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> NoReturn:
        print(f"pufferfish_pgm {_version()}")
        parser.exit()


def _version() -> str:
    """The installed distribution's version (``importlib.metadata``, the one source), else
    the package's ``__version__`` (a source tree that is not installed)."""
    from importlib import metadata

    try:
        return metadata.version("pufferfish_pgm")
    except metadata.PackageNotFoundError:
        return str(getattr(sys.modules[__name__.split(".")[0]], "__version__", "unknown"))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code (0 ok, 2 bad input or nothing computed)."""
    from .._budget import BUDGET_ENV

    saved = os.environ.get(BUDGET_ENV)
    try:
        return _main(argv)
    finally:   # --memory-budget holds for this run only (main may be called in-process)
        if saved is None:
            os.environ.pop(BUDGET_ENV, None)
        else:
            os.environ[BUDGET_ENV] = saved


def _main(argv: Sequence[str] | None) -> int:
    try:
        args = build_parser().parse_args(argv)
        _apply_budget(getattr(args, "memory_budget", None))
        from ..mechanisms._engine import quiet
        from . import _commands  # deferred: `--help` and bad arguments need no scipy/pgmpy

        with quiet():   # a useless result is said in the output, not as a Python warning
            result = getattr(_commands, args.command)(args)
        _print(result, args.json)
        return int(result.get("exit_code", 0))
    except PufferfishError as err:
        print(f"error: {cli_words(' '.join(str(err).split()))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:   # Ctrl-C: one line, the shell's code for SIGINT (128 + 2)
        print("interrupted (Ctrl-C); nothing more was computed or written", file=sys.stderr)
        return 130
    except BrokenPipeError:   # the reader went away (`... | head`): stop quietly, as cat does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (OSError, ValueError) as err:  # e.g. an unreadable CSV
        print(f"error: {type(err).__name__}: {err}", file=sys.stderr)
        return 2


def _apply_budget(text: str | None) -> None:
    """``--memory-budget``: checked, then the process's global setting (the environment)."""
    if text is not None:
        from .._budget import BUDGET_ENV, memory_budget  # deferred like the commands

        os.environ[BUDGET_ENV] = str(memory_budget(text))


def _print(result: dict, as_json: bool) -> None:
    if as_json:
        print(json.dumps(_finite(result["json"]), indent=1, default=_jsonable, allow_nan=False))
    else:
        print(result["text"])


def _finite(x: Any) -> Any:
    """``x`` with NaN and infinite floats as None (strict JSON has no NaN: an optimal-noise
    calibration has no Laplace scale).

    Examples
    --------
    >>> _finite({"scale": float("nan"), "rows": [1.0, float("inf")]})
    {'scale': None, 'rows': [1.0, None]}
    """
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_finite(v) for v in x]
    return x


def _jsonable(x: Any) -> Any:
    if hasattr(x, "tolist"):
        return x.tolist()
    return str(x)


def run() -> None:
    """Console-script entry point."""
    raise SystemExit(main())


if __name__ == "__main__":
    run()
