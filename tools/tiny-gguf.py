#!/usr/bin/env python3
"""Tiny random models written as GGUF files, as llama.cpp's converter names their keys and (dgqtools.tiny_gguf; --help for its usage)."""

import sys

from dgqtools.tiny_gguf import main

if __name__ == "__main__":
    sys.exit(main())
