"""Entry point for `python -m deepmem`."""

import sys

from deepmem.cli import main

sys.exit(main())
