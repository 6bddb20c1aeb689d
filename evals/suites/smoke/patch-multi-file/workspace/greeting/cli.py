"""`python -m greeting.cli NAME`: print a greeting."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from greeting.core import greet


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="greeting")
    parser.add_argument("name")
    args = parser.parse_args(argv)
    print(greet(args.name))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
