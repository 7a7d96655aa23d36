#!/usr/bin/env python3
"""Lloyd-Max code grids of dgq3's `nl` parameter (docs/spec.md rule W8), pinned as C++ constants.

The code is dgqtools.dgq3_grids; --help gives the usage.
"""

import sys

from dgqtools.dgq3_grids import main

if __name__ == "__main__":
    sys.exit(main())
