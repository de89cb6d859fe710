"""The ``pufferfish-pgm`` command line: ``demo``, ``plan``, ``calibrate``, ``release``, ``audit``,
``compare``. Bad input is one line on stderr and exit code 2.
"""

from ._main import main, run

__all__ = [
    "main",
    "run",
]
