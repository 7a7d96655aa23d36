#!/usr/bin/env python3
"""Export a real attention trace (dgq trace format v1, docs/trace-format.md) from SmolLM2-135M.

The code is the package dgqtools.export_trace; --help gives the usage.
"""

import sys

from dgqtools.export_trace import main

if __name__ == "__main__":
    sys.exit(main())
