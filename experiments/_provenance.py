"""Where and on what code a result was measured: the machine and the code
version, recorded with every benchmark row and printed in
``paper_figures/README.md``. Standard library only.

``code_version()`` is ``git rev-parse --short HEAD``, with ``+dirty.<digest>``
when the files that decide the results (``liedyn/``, ``models/``,
``experiments/``, ``pyproject.toml``) differ from that commit; the digest of
those files tells two dirty states apart, so a resumed sweep never mixes rows
of different code. Outside a git checkout it is ``unversioned.<digest>``.
"""

import hashlib
import os
import platform
import subprocess
from datetime import datetime, timezone
from functools import lru_cache
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("liedyn", "models", "experiments", "pyproject.toml")


def _git(*args):
    out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=30)
    if out.returncode != 0:
        raise OSError(out.stderr.strip())
    return out.stdout.strip()


def source_digest():
    """Short SHA-1 of every ``.py`` file and ``pyproject.toml`` under :data:`SOURCES`."""
    h = hashlib.sha1()
    for name in SOURCES:
        path = ROOT / name
        files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
        for f in files:
            if f.is_file() and "__pycache__" not in f.parts:
                h.update(f.relative_to(ROOT).as_posix().encode())
                h.update(f.read_bytes())
    return h.hexdigest()[:8]


def code_version():
    """``<commit>``, ``<commit>+dirty.<digest>`` or ``unversioned.<digest>``."""
    try:
        commit = _git("rev-parse", "--short", "HEAD")
        dirty = _git("status", "--porcelain", "--", *SOURCES)
    except (OSError, subprocess.SubprocessError):
        return f"unversioned.{source_digest()}"
    return f"{commit}+dirty.{source_digest()}" if dirty else commit


@lru_cache(maxsize=1)
def cpu_model():
    """The processor's name (``/proc/cpuinfo``), or what ``platform`` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def memory_gb():
    """The machine's physical memory in GB (10⁹ bytes), read at run time
    (``sysconf``, else ``/proc/meminfo``); None when neither tells."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1e9
    except (AttributeError, ValueError, OSError):
        pass
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024 / 1e9
    except (OSError, ValueError, IndexError):
        pass
    return None


def memory_text():
    """Text such as ``"16 GB"`` of :func:`memory_gb`, or ``"an unknown amount"``."""
    gb = memory_gb()
    return "an unknown amount" if gb is None else f"{gb:.0f} GB"


def _version(dist):
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def machine():
    """Host, processor, cores and the versions of what is timed: Python,
    NumPy, numba and, where installed, the baselines CasADi and Pinocchio."""
    versions = [f"Python {platform.python_version()}"]
    for dist, name in (("numpy", "NumPy"), ("numba", "numba"), ("casadi", "CasADi"),
                       ("pin", "Pinocchio")):
        v = _version(dist)
        if v is not None:
            versions.append(f"{name} {v}")
    return f"{platform.node()}, {cpu_model()}, {os.cpu_count()} cores, {', '.join(versions)}"


def now():
    """UTC time, to the minute."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def stamp():
    """``{"machine": …, "code": …}``: what a resumed row must match."""
    return {"machine": machine(), "code": code_version()}
