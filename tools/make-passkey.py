#!/usr/bin/env python3
"""Passkey task files for `dgq eval --task passkey` (format "dgq-passkey" v1, docs/eval.md).

The code is dgqtools.make_passkey; --help gives the usage.
"""

import sys

from dgqtools.make_passkey import main

if __name__ == "__main__":
    sys.exit(main())
