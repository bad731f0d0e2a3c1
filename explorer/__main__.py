"""``python -m explorer``: the same as the ``candela-explorer`` command."""

from .cli import main

if __name__ == "__main__":  # importing (e.g. doctest collection) must not start a server
    raise SystemExit(main())
