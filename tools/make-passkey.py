#!/usr/bin/env python3
"""Passkey task files for `dgq eval --task passkey` (format "dgq-passkey" v1, docs/eval.md). (dgqtools.make_passkey; --help for its usage)."""

import sys

from dgqtools.make_passkey import main

if __name__ == "__main__":
    sys.exit(main())
