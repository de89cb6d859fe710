"""``python -m pufferfish_pgm.cli``: the command line."""

import sys

from ._main import main

sys.exit(main())
