"""``python -m pbj``: the command line."""

import sys

from pbj.cli import main

sys.exit(main())
