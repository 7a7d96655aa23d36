"""The mutation campaign over every kind of file dgq reads (tools/mutation-campaign.py;
docs/robustness.md, "Mutation campaign"): seeds, their mutants, the dgq commands run on each, the
classification of every run and the summary. dgqtools.campaign.cli's docstring is the full story.
"""

import os

# Before h5py loads (HDF5 reads it once): the mutants are opened without HDF5's file locks.
os.environ.setdefault("HDF5_USE_FILE_LOCKING", "FALSE")
