"""Where the checkout is: the tools' defaults (models/, out/, docs/) are paths inside it."""

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
