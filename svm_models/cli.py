"""The ``svm-models`` command (placeholder: grows with the demo and solver listing)."""

import sys


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "setup-ipopt":
        from .setup_ipopt import main as setup_main

        return setup_main(argv[1:])
    print("usage: svm-models {demo,setup-ipopt,solvers}")
    return 2
