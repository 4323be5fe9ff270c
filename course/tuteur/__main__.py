"""`python -m course.tuteur`: see course.tuteur.cli."""

import sys

from .cli import main

sys.exit(main())
