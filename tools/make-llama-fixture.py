#!/usr/bin/env python3
"""Writes the llama.cpp fixture of tests/python/test_llama_fixture.py (docs/eval.md, "Pinned to
llama.cpp"); tools/make-llama-fixture.sh runs it.

The code is dgqtools.make_llama_fixture; --help gives the usage.
"""

import sys

from dgqtools.make_llama_fixture import main

if __name__ == "__main__":
    sys.exit(main())
