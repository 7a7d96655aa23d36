#!/usr/bin/env python3
"""Mutation campaign over every kind of file dgq reads (dgqtools.campaign; --help for its usage)."""

import sys

from dgqtools.campaign.cli import main

if __name__ == "__main__":
    sys.exit(main())
