#!/usr/bin/env python3
"""Tiny random models written as GGUF files, as llama.cpp's converter names their keys and tensors.

The code is dgqtools.tiny_gguf; --help gives the usage.
"""

import sys

from dgqtools.tiny_gguf import main

if __name__ == "__main__":
    sys.exit(main())
