"""``python -m dmlopt`` is the ``dmlopt`` command."""

import sys

from dmlopt.cli import main

sys.exit(main())
