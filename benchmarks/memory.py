"""Memory readings of a process, from /proc (Linux), shared by the benchmark scripts."""

from __future__ import annotations


def rss_bytes(pid="self") -> int:
    """Resident set size of process ``pid`` (0 when it cannot be read)."""
    return _status_kb(pid, "VmRSS:") * 1024


def hwm_bytes() -> int:
    """This process's resident-set high-water mark (``VmHWM``)."""
    return _status_kb("self", "VmHWM:") * 1024


def reset_hwm() -> None:
    """Reset the high-water mark to the current RSS (``clear_refs`` 5; ignored where refused)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def _status_kb(pid, key: str) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0
