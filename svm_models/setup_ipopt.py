"""Make Ipopt usable from Pyomo on a plain Debian/Ubuntu machine, without conda or internet.

Usage::

    python -m svm_models.setup_ipopt            # set up (idempotent, fast when done)
    python -m svm_models.setup_ipopt --check    # only check, change nothing
    python -m svm_models.setup_ipopt --force    # rebuild the PyNumero library anyway

Why this route (see the README, "Solvers"):

* conda and ``idaes get-extensions`` download Ipopt binaries at run time, so they do not work
  on a machine without internet.
* Debian's own ``coinor-libipopt-dev`` is Ipopt 3.11 and ships no ``ipopt`` executable, so
  Pyomo's ``ipopt`` (executable) plugin cannot use it.
* What works: the pip wheel ``cyipopt-wheels==1.7.0.dev0`` (import name ``cyipopt``) bundles a
  real Ipopt 3.14 with MUMPS. Pyomo drives it through its ``cyipopt`` solver, which goes through
  PyNumero, and PyNumero needs a small compiled library, ``libpynumero_ASL.so``, to evaluate
  the model (it reads the model as an AMPL .nl file through the AMPL Solver Library, ASL).
  Pyomo ships the C++ sources of that library; we build them with CMake against Debian's
  ``libamplsolver-dev`` (the netlib ASL) and copy the result into ``<PYOMO_CONFIG_DIR>/lib``,
  the first place Pyomo looks for it. The build takes a few seconds.
* PyNumero also needs the ``packaging`` module (Pyomo uses it to compare numpy versions;
  without it the ``cyipopt`` interface fails with a DeferredImportError that blames numpy),
  and ``numpy`` and ``scipy``.

Steps (each skipped when already done):

1. Check: in a fresh Python process, load the PyNumero ASL library, ask Pyomo whether the
   ``cyipopt`` solver is available and solve a tiny QP with a known answer
   (min (x-2)^2 + y^2 s.t. x <= 1, y >= 1, solution x = y = 1, objective 2).
   If that works, stop: "already set up". Also report any ``ipopt`` executable that Pyomo
   finds (PATH or ``<PYOMO_CONFIG_DIR>/bin``): Pyomo's ``ipopt`` plugin then works too.
2. pip-install ``cyipopt-wheels`` / ``packaging`` / ``numpy`` / ``scipy`` if missing.
3. apt-install ``libamplsolver-dev cmake g++`` if the ASL headers/library, CMake or a
   C/C++ compiler are missing (as root; otherwise print the command to run).
4. Build ``libpynumero_ASL.so`` from Pyomo's installed sources and copy it into
   ``<PYOMO_CONFIG_DIR>/lib``.
5. Check again (fresh process, so Pyomo's cached library search starts clean).

This module imports only the standard library (and Pyomo, inside a child process), so it
works even while the rest of the package is incomplete or broken.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

CYIPOPT_REQUIREMENT = "cyipopt-wheels==1.7.0.dev0"
APT_PACKAGES = ("libamplsolver-dev", "cmake", "g++")
ASL_INCLUDE_DIR = "/usr/include/ampl-netlib-solvers"
LIBRARY_NAME = "libpynumero_ASL.so"

_RESULT_MARKER = "@@SETUP_IPOPT_RESULT@@"

# Run in a child process: a fresh interpreter sees a library copied in a moment ago (Pyomo
# caches its library search per process) and a crash while loading the library cannot take
# the caller down. Prints one JSON line after _RESULT_MARKER.
_CHECK_SCRIPT = r"""
import json, os, sys, traceback
out = {"python": sys.executable, "pyomo": None, "pyomo_dir": None, "config_dir": None,
       "asl_library": None, "asl_loads": False, "asl_error": None,
       "cyipopt_module": None, "cyipopt_error": None, "cyipopt_available": False,
       "ipopt_version": None, "qp_ok": False, "qp_error": None,
       "ipopt_executable": None}

def err(e):
    return "%s: %s" % (type(e).__name__, e)

try:
    import pyomo
    import pyomo.environ as pyo
    from pyomo.common.envvar import PYOMO_CONFIG_DIR
    out["pyomo"] = pyomo.__version__
    out["pyomo_dir"] = os.path.dirname(os.path.abspath(pyomo.__file__))
    out["config_dir"] = PYOMO_CONFIG_DIR
except Exception as e:
    out["pyomo_error"] = err(e)
    print(MARKER + json.dumps(out)); sys.exit(0)

try:
    from pyomo.contrib.pynumero.asl import AmplInterface
    if AmplInterface.available():
        out["asl_library"] = AmplInterface.libname
        import ctypes
        ctypes.cdll.LoadLibrary(AmplInterface.libname)
        out["asl_loads"] = True
    else:
        out["asl_error"] = "libpynumero_ASL.so not found by Pyomo"
except Exception as e:
    out["asl_error"] = err(e)

try:
    import cyipopt
    out["cyipopt_module"] = getattr(cyipopt, "__file__", "?")
    out["ipopt_version"] = ".".join(str(v) for v in cyipopt.IPOPT_VERSION) \
        if hasattr(cyipopt, "IPOPT_VERSION") else None
except Exception as e:
    out["cyipopt_error"] = err(e)

try:
    ipopt_exe = pyo.SolverFactory("ipopt")
    if ipopt_exe.available(exception_flag=False):
        out["ipopt_executable"] = ipopt_exe.executable()
except Exception:
    pass

try:
    solver = pyo.SolverFactory("cyipopt")
    out["cyipopt_available"] = bool(solver.available(exception_flag=False))
except Exception as e:
    out["qp_error"] = err(e)
    solver = None

if solver is not None and out["cyipopt_available"] and out["asl_loads"]:
    try:
        m = pyo.ConcreteModel()
        m.x = pyo.Var(initialize=0.0)
        m.y = pyo.Var(initialize=0.0)
        m.cx = pyo.Constraint(expr=m.x <= 1)
        m.cy = pyo.Constraint(expr=m.y >= 1)
        m.obj = pyo.Objective(expr=(m.x - 2) ** 2 + m.y ** 2)
        res = solver.solve(m, tee=False, options={"print_level": 0, "sb": "yes"})
        x, y, f = pyo.value(m.x), pyo.value(m.y), pyo.value(m.obj)
        tc = str(res.solver.termination_condition)
        if abs(x - 1) < 1e-5 and abs(y - 1) < 1e-5 and abs(f - 2) < 1e-5:
            out["qp_ok"] = True
        else:
            out["qp_error"] = ("wrong answer: x=%g y=%g objective=%g (expected 1, 1, 2), "
                               "termination %s" % (x, y, f, tc))
    except Exception as e:
        out["qp_error"] = err(e)

print(MARKER + json.dumps(out))
""".replace("MARKER", repr(_RESULT_MARKER))


class SetupError(Exception):
    """A step failed; the message says what failed and what to do."""


def _say(verbose: bool, msg: str) -> None:
    if verbose:
        print(f"[setup-ipopt] {msg}", flush=True)


def _tail(text: str, lines: int = 25) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def _run(cmd: list[str], what: str, env: dict | None = None, timeout: float = 1800):
    """Run a command, capturing its output; return the CompletedProcess (never raises on exit code)."""
    try:
        return subprocess.run(
            cmd, capture_output=True, text=True, env=env, timeout=timeout, check=False
        )
    except FileNotFoundError:
        raise SetupError(f"{what}: command not found: {cmd[0]}") from None
    except subprocess.TimeoutExpired:
        raise SetupError(f"{what}: timed out after {timeout:.0f} s: {' '.join(cmd)}") from None


# --------------------------------------------------------------------------- checking


def check() -> dict:
    """Probe Pyomo + cyipopt + PyNumero in a fresh interpreter; return a dict of findings."""
    proc = _run([sys.executable, "-c", _CHECK_SCRIPT], "checking Ipopt", timeout=600)
    for line in proc.stdout.splitlines():
        if line.startswith(_RESULT_MARKER):
            return json.loads(line[len(_RESULT_MARKER):])
    raise SetupError(
        f"the check process crashed (exit code {proc.returncode}) while loading Pyomo, "
        f"cyipopt or {LIBRARY_NAME}; rerun with --force to rebuild the library.\n"
        + _tail(proc.stdout + "\n" + proc.stderr)
    )


def _works(info: dict) -> bool:
    return bool(info.get("qp_ok"))


def _describe(info: dict) -> str:
    ver = f"Ipopt {info['ipopt_version']}" if info.get("ipopt_version") else "Ipopt"
    return (
        f"Pyomo {info.get('pyomo')} solver 'cyipopt' ({ver} via cyipopt) works; "
        f"PyNumero library: {info.get('asl_library')}"
    )


def _problems(info: dict) -> list[str]:
    probs = []
    if info.get("pyomo_error"):
        probs.append(f"Pyomo does not import: {info['pyomo_error']}")
        return probs
    if info.get("cyipopt_error"):
        probs.append(f"cyipopt does not import: {info['cyipopt_error']}")
    if info.get("asl_error"):
        probs.append(f"PyNumero ASL library: {info['asl_error']}")
    if not info.get("cyipopt_available") and not info.get("cyipopt_error"):
        probs.append("Pyomo reports the 'cyipopt' solver as unavailable")
    if info.get("qp_error"):
        probs.append(f"test QP failed: {info['qp_error']}")
    return probs


def _report_ipopt_executable(info: dict, verbose: bool) -> None:
    if info.get("ipopt_executable"):
        _say(verbose, f"an ipopt executable is present ({info['ipopt_executable']}): "
                      "Pyomo's 'ipopt' solver can use it too")


# --------------------------------------------------------------------------- python packages


def _module_present(name: str) -> bool:
    """Whether `name` is installed for sys.executable (checked in a child: no stale caches)."""
    code = f"import importlib.util, sys; sys.exit(0 if importlib.util.find_spec({name!r}) else 1)"
    return _run([sys.executable, "-c", code], f"looking for {name}").returncode == 0


def _ensure_python_packages(verbose: bool) -> None:
    wanted = {
        "cyipopt": CYIPOPT_REQUIREMENT,  # Ipopt 3.14 + MUMPS in a wheel
        "packaging": "packaging",        # PyNumero's numpy version check needs it
        "numpy": "numpy",
        "scipy": "scipy",                # PyNumero uses scipy.sparse
    }
    missing = [req for mod, req in wanted.items() if not _module_present(mod)]
    if not missing:
        _say(verbose, "Python packages cyipopt, packaging, numpy, scipy: present")
        return
    cmd = [sys.executable, "-m", "pip", "install", *missing]
    _say(verbose, "installing " + " ".join(missing) + " with pip")
    proc = _run(cmd, "pip install")
    if proc.returncode != 0:
        raise SetupError(
            f"pip could not install {' '.join(missing)} into {sys.executable}.\n"
            f"Run it yourself to see why: {' '.join(cmd)}\n" + _tail(proc.stdout + proc.stderr, 15)
        )


# --------------------------------------------------------------------------- system packages


def _find_asl_library() -> str | None:
    candidates = sorted(glob.glob("/usr/lib/*/libamplsolver.so")) + sorted(
        glob.glob("/usr/lib*/libamplsolver.so")
    ) + sorted(glob.glob("/usr/local/lib*/libamplsolver.so"))
    for path in candidates:
        if os.path.exists(path):
            return path
    return None


def _missing_system_parts() -> list[str]:
    missing = []
    if not os.path.exists(os.path.join(ASL_INCLUDE_DIR, "asl.h")) or _find_asl_library() is None:
        missing.append("ASL headers/library (libamplsolver-dev)")
    if shutil.which("cmake") is None:
        missing.append("cmake")
    if shutil.which("c++") is None and shutil.which("g++") is None:
        missing.append("C++ compiler (g++)")
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        missing.append("C compiler (gcc)")
    return missing


def _ensure_system_packages(verbose: bool) -> None:
    missing = _missing_system_parts()
    if not missing:
        _say(verbose, "ASL (libamplsolver-dev), cmake and a C++ compiler: present")
        return
    apt_cmd = ["apt-get", "install", "-y", "--no-install-recommends", *APT_PACKAGES]
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        raise SetupError(
            "missing: " + ", ".join(missing) + ". Install them, then run this again:\n"
            "    sudo apt-get install " + " ".join(APT_PACKAGES)
        )
    if shutil.which("apt-get") is None:
        raise SetupError(
            "missing: " + ", ".join(missing) + ", and there is no apt-get on this machine. "
            "Install the AMPL Solver Library (headers in " + ASL_INCLUDE_DIR + "), CMake and "
            "a C/C++ compiler with your package manager, then run this again."
        )
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    _say(verbose, "missing " + ", ".join(missing) + "; running: " + " ".join(apt_cmd))
    proc = _run(apt_cmd, "apt-get install", env=env)
    if proc.returncode != 0:
        # Usually stale or absent package lists (fresh containers ship none): update once, retry.
        _say(verbose, "apt-get install failed; running apt-get update and retrying")
        upd = _run(["apt-get", "update"], "apt-get update", env=env)
        proc = _run(apt_cmd, "apt-get install", env=env)
        if proc.returncode != 0:
            raise SetupError(
                "apt-get could not install " + " ".join(APT_PACKAGES) + ".\n"
                "Run it yourself to see why: apt-get update && " + " ".join(apt_cmd) + "\n"
                + _tail(upd.stdout + upd.stderr, 5) + "\n" + _tail(proc.stdout + proc.stderr, 15)
            )
    still = _missing_system_parts()
    if still:
        raise SetupError("after apt-get install, still missing: " + ", ".join(still))


# --------------------------------------------------------------------------- build


def _build_library(pyomo_dir: str, lib_dir: str, verbose: bool) -> str:
    src = os.path.join(pyomo_dir, "contrib", "pynumero", "src")
    if not os.path.exists(os.path.join(src, "CMakeLists.txt")):
        raise SetupError(
            f"Pyomo's PyNumero sources are not at {src}; reinstall Pyomo "
            "(pip install --force-reinstall pyomo) and run this again."
        )
    asl_lib = _find_asl_library()
    with tempfile.TemporaryDirectory(prefix="pynumero_build_") as build:
        configure = [
            "cmake", "-S", src, "-B", build,
            f"-DASL_INCLUDE_DIR={ASL_INCLUDE_DIR}",
            f"-DASL_LIBRARY={asl_lib}",
            "-DCMAKE_BUILD_TYPE=Release",
        ]
        _say(verbose, f"building {LIBRARY_NAME} from {src}")
        for cmd, what in ((configure, "cmake configure"), (["cmake", "--build", build], "cmake build")):
            proc = _run(cmd, what)
            if proc.returncode != 0:
                raise SetupError(
                    f"{what} of {LIBRARY_NAME} failed. Command:\n    {' '.join(cmd)}\n"
                    + _tail(proc.stdout + "\n" + proc.stderr)
                )
        built = glob.glob(os.path.join(build, "**", LIBRARY_NAME), recursive=True)
        if not built:
            raise SetupError(f"the build finished but produced no {LIBRARY_NAME} in {build}")
        try:
            os.makedirs(lib_dir, exist_ok=True)
            target = os.path.join(lib_dir, LIBRARY_NAME)
            tmp_target = target + f".tmp{os.getpid()}"
            shutil.copy2(built[0], tmp_target)
            os.replace(tmp_target, target)  # atomic: never a half-written library in place
        except OSError as e:
            raise SetupError(
                f"could not copy {LIBRARY_NAME} into {lib_dir}: {e}. Set PYOMO_CONFIG_DIR "
                "to a writable directory (Pyomo looks in $PYOMO_CONFIG_DIR/lib) and run again."
            ) from None
    _say(verbose, f"installed {target}")
    return target


# --------------------------------------------------------------------------- main entry points


def setup_ipopt(verbose: bool = True, force: bool = False) -> bool:
    """Make Pyomo's ``cyipopt`` solver work; return True when a test QP solves correctly.

    Idempotent: when everything already works it only checks (a second or two).
    ``force=True`` rebuilds and reinstalls the PyNumero library even if it works.
    Progress goes to stdout when ``verbose``; failures are always reported on stderr.
    """
    start = time.monotonic()
    try:
        info = check()
        if info.get("pyomo_error"):
            raise SetupError(
                f"Pyomo is not importable by {sys.executable} ({info['pyomo_error']}). "
                f"Install it first: {sys.executable} -m pip install pyomo"
            )
        if _works(info) and not force:
            _report_ipopt_executable(info, verbose)
            _say(verbose, f"already set up: {_describe(info)} "
                          f"(checked in {time.monotonic() - start:.1f} s)")
            return True
        for problem in _problems(info):
            _say(verbose, f"found: {problem}")

        _ensure_python_packages(verbose)
        lib_dir = os.path.join(info["config_dir"], "lib")
        if force or not info.get("asl_loads"):
            _ensure_system_packages(verbose)
            _build_library(info["pyomo_dir"], lib_dir, verbose)
        else:
            _say(verbose, f"PyNumero library loads: {info['asl_library']}")

        info = check()
        _report_ipopt_executable(info, verbose)
        if not _works(info):
            raise SetupError(
                "setup finished but the test QP still fails:\n  - "
                + "\n  - ".join(_problems(info) or ["unknown reason"])
                + "\nRerun with --force to rebuild the PyNumero library."
            )
        _say(verbose, f"OK: {_describe(info)} "
                      f"(setup took {time.monotonic() - start:.1f} s)")
        return True
    except SetupError as e:
        print(f"[setup-ipopt] FAILED: {e}", file=sys.stderr, flush=True)
        return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="svm-models setup-ipopt",
        description="Make Ipopt usable from Pyomo (solver 'cyipopt') without conda or internet: "
        "pip-installs cyipopt-wheels, builds PyNumero's ASL library against Debian's "
        "libamplsolver-dev into $PYOMO_CONFIG_DIR/lib, and checks it on a tiny QP.",
    )
    parser.add_argument("--force", action="store_true",
                        help="rebuild the PyNumero library even if everything works")
    parser.add_argument("--check", action="store_true",
                        help="only check whether Ipopt works; change nothing")
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="print only failures")
    args = parser.parse_args(argv)
    verbose = not args.quiet

    if args.check:
        try:
            info = check()
        except SetupError as e:
            print(f"[setup-ipopt] FAILED: {e}", file=sys.stderr)
            return 1
        _report_ipopt_executable(info, verbose)
        if _works(info):
            _say(verbose, f"OK: {_describe(info)}")
            return 0
        print("[setup-ipopt] NOT SET UP: " + "; ".join(_problems(info) or ["unknown reason"])
              + f". Run: {sys.executable} -m svm_models.setup_ipopt", file=sys.stderr)
        return 1

    return 0 if setup_ipopt(verbose=verbose, force=args.force) else 1


if __name__ == "__main__":
    raise SystemExit(main())
