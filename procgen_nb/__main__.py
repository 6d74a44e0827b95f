"""``python -m procgen_nb``: the ``procgen-nb`` command line (``python -m procgen_nb --help``)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
