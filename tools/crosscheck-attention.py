#!/usr/bin/env python3
"""Independent numpy check of the replay's attention metrics (docs/results.md, "Cross-check").

The code is dgqtools.crosscheck_attention; --help gives the usage.
"""

import sys

from dgqtools.crosscheck_attention import main

if __name__ == "__main__":
    sys.exit(main())
