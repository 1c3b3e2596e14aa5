"""Regenerate tests/data/libsvm_references.json: libsvm's optima (tol 1e-10) of the problems
the suite holds its answers to (tests/libsvm_reference.py), those that take libsvm more than
THRESHOLD seconds -- the rest are solved live by the tests in a moment.

Runs the tests that use the reference once with every libsvm solve live and recorded
(SVM_MODELS_RECORD_LIBSVM), then writes the slow ones. Run it after a change of the data, the
kernels' parameters or C of those tests, or of scikit-learn's libsvm (tests/
test_libsvm_reference.py fails when a stored optimum is no longer libsvm's, or a slow problem
is missing):

    python tests/data/make_libsvm_references.py            # about 10 minutes
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import sklearn

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
OUT = HERE / "libsvm_references.json"
#: libsvm solves slower than this are stored
THRESHOLD = 0.5
#: the tests that hold answers to libsvm through tests/libsvm_reference.py
TESTS = ["tests/test_every_c.py",
         "tests/test_reliability.py::test_numerical_trouble_after_the_retry_is_a_typed_error"]


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        record = Path(tmp) / "record.json"
        env = dict(os.environ, SVM_MODELS_RECORD_LIBSVM=str(record))
        args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *TESTS]
        try:
            import xdist  # noqa: F401
            args[3:3] = ["-p", "no:xdist"]
        except ImportError:
            pass
        rc = subprocess.call(args, cwd=ROOT, env=env)
        # libsvm's optima hold whatever the tests said of the backends' answers
        if rc != 0:
            print(f"pytest exited {rc} (a backend's answer, not libsvm's): see above",
                  file=sys.stderr)
        problems = json.loads(record.read_text())
    slow = {k: v for k, v in sorted(problems.items(), key=lambda kv: kv[1]["test"])
            if v["seconds"] >= THRESHOLD}
    OUT.write_text(json.dumps({"about": "libsvm (scikit-learn SVC, kernel='precomputed', "
                               "tol=1e-10) optima; tests/data/make_libsvm_references.py",
                               "sklearn": sklearn.__version__, "threshold_seconds": THRESHOLD,
                               "problems": slow}, indent=1) + "\n")
    total = sum(v["seconds"] for v in slow.values())
    print(f"{OUT}: {len(slow)} of {len(problems)} problems, {total:.0f} s of libsvm stored")
    return rc


if __name__ == "__main__":
    sys.exit(main())
