"""``python -m blackout_training.cli``: the ``blackout`` command."""

import sys

from . import main

sys.exit(main())
