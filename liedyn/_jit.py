"""The one place that decides how kernels are compiled and where they are cached.

Every numerical kernel in liedyn is written once, in the subset of Python
that numba compiles, and decorated with :func:`njit`. With numba installed
(a core dependency) kernels are compiled on first use and cached on disk.
Without it the package still imports and runs the same code interpreted,
which is slow, and says once how to get the compiled path.
Set ``NUMBA_DISABLE_JIT=1`` to step through kernels in a debugger.

The kernel cache
----------------
Folder: ``<root>/liedyn/numba-<hash>``, the root being the first usable of
``$NUMBA_CACHE_DIR``, ``$XDG_CACHE_HOME`` (``~/.cache`` when unset) and the
temporary folder (there the top folder is ``liedyn-kernels-<uid>``).
``<hash>`` covers the contents and package-relative paths of every source
file of the package and numba's version, never where the package is
installed: every installation (clone, venv, wheel) of the same sources with
the same numba shares one folder, and a kernel is compiled once per version.
Inside it, one sub-folder per source directory of the package
(``kernels-liedyn.spatial`` for ``liedyn/spatial``; a kernel defined outside
the package gets numba's name, keyed on its file's path). The hash covers
every source file because numba keys a cached kernel on its own file only, so
a kernel whose inlined helpers live in another module would survive a change
to them. No folder name is an identifier, so none can be imported as a package.

Trust: cache entries are pickles that later processes load and run, so the
folder is used only if every directory from ``/`` down to it is owned by the
current user or root and writable by nobody else, except a sticky shared
folder (``/tmp``) directly above a folder the user owns; the top folder and
everything below it must be the user's, none of them a symbolic link. This is
checked before every load and save, not once per process: the path is walked
from ``/`` with ``openat`` (``O_NOFOLLOW``; the folders above the cache as
``O_PATH`` handles, which need no read permission), each directory checked on
the handle just opened, and the files are read and written through the handle
of the last one, so no path is resolved again between the check and the use.
The top folder is pinned at its first use: if it is later replaced (renamed
away, another put in its place), it is refused even if it passes the checks.
A refused folder gets one short ``RuntimeWarning`` naming the directory and
why; the next candidate is used (the private temporary folder), and without
any the kernels are compiled in every process (as they are on systems
without ``openat`` and ``O_NOFOLLOW``, such as Windows). New folders are
created with mode 0700, files with mode 0600, written to a temporary name
and renamed.

Authentication: every cache file (index and compiled code) carries an
HMAC-SHA-256 of its name and contents under a random 32-byte key kept in the
top folder (``key``, mode 0600, read through the checked handle and kept for
the process). The tag is checked before anything in the file is unpickled, so
a file that was not written by this user's liedyn, damaged, truncated or
copied from elsewhere, is never deserialised: it is deleted and the kernel
compiled again; the first such file of a process raises one
``RuntimeWarning`` naming its folder, and a save that fails warns once in
the same way. numba's own index and data format is not used for our kernels.
The check sits in the cache object numba consults for our dispatchers, so it
holds however a kernel is reached (a call, ``dispatcher.compile(sig)``, or a
callee typed inside another kernel).

Laziness: nothing is hashed, created or read at import. The folder is chosen
at the first kernel call of a process. At the first compilation of a process
(a cache miss) one line on stderr says that kernels are being compiled,
naming the group (the module, such as ``liedyn.algorithm.inverse``) and the kernel
compiled first, and folders of other versions are pruned (see :func:`_prune`);
every later group compiled in that process gets one short line of its own,
so a long first call says what it is waiting for.
"""

import errno
import hashlib
import hmac
import inspect
import itertools
import os
import pickle
import re
import secrets
import shutil
import stat
import sys
import tempfile
import time
import warnings
from pathlib import Path

try:
    import numba as _numba
except ImportError:  # pragma: no cover - exercised only without numba
    _numba = None
    warnings.warn(
        "numba is not installed: liedyn runs its kernels interpreted, which is "
        "orders of magnitude slower. Install it with `pip install numba`.",
        RuntimeWarning,
        stacklevel=2,
    )

HAVE_NUMBA = _numba is not None
# Compiled (numba present and not disabled with NUMBA_DISABLE_JIT=1).
JIT = HAVE_NUMBA and not _numba.config.DISABLE_JIT

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))
_UID = os.getuid() if hasattr(os, "getuid") else None
# Checked directory handles need openat with O_NOFOLLOW: POSIX systems only.
_POSIX = (_UID is not None and hasattr(os, "O_DIRECTORY") and hasattr(os, "O_NOFOLLOW")
          and os.open in os.supports_dir_fd)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW
# Folders above the cache are only passed through: O_PATH needs no read
# permission (a home folder of mode 0711), where the system has it.
_PASS_FLAGS = _DIR_FLAGS if not hasattr(os, "O_PATH") else (
    os.O_PATH | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW)
_READ_FLAGS = os.O_RDONLY | _NOFOLLOW
_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW
_FOLDER_NAME = re.compile(r"numba-[0-9a-f]{16}")
_INSTALL_MARK = re.compile(r"install-[0-9a-f]{16}")
_MAGIC = b"liedyn kernel cache 1\n"      # then the 32-byte HMAC-SHA-256 tag, then the body
_KEY_NAME, _KEY_BYTES = "key", 32
_STALE_SECONDS = 30 * 24 * 3600.0    # a folder unused this long is removed whole
_COMPILE_SECONDS = "about 2 minutes of CPU time"  # python -m liedyn.compile: 61 kernels, 116 s of CPU

# Per-process state. Every hook below runs under numba's global compiler lock.
_folder = None            # the cache folder of this source version, or None
_folder_chosen = False
_pin = None               # (top folder, its (st_dev, st_ino) at first use, its key)
_refused_tops = set()     # top folders refused in this process
_announce = True          # print the first-compilation notice
_first_compile_done = False
_compiled = 0             # kernels compiled (cache misses) in this process
_groups_announced = set()  # modules whose compilation was announced
_warned = set()


class _Refused(Exception):
    """A directory on the way to the cache folder is not trusted; the message says why."""


def _source_hash():
    """SHA-1 (16 hex digits) of numba's version and the package-relative paths
    and contents of the package's sources: the same wherever they are installed."""
    h = hashlib.sha1(f"numba {_numba.__version__ if HAVE_NUMBA else None}\n".encode())
    pkg = Path(_PKG_DIR)
    for f in sorted(pkg.rglob("*.py")):
        h.update(f.relative_to(pkg).as_posix().encode() + b"\0")
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


def _install_mark():
    """The name of the empty file that says this installation uses a cache folder."""
    return "install-" + hashlib.sha1(os.path.realpath(_PKG_DIR).encode()).hexdigest()[:16]


def _open_dir(fd, name, path, flags):
    """``openat(fd, name)`` of a directory, never through a symbolic link."""
    try:
        child = os.open(name, flags, dir_fd=fd)
    except OSError as exc:      # ELOOP, or ENOTDIR for a link to a directory
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR) or not stat.S_ISLNK(
                os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
            raise
        raise _Refused(f"{path} is a symbolic link") from None
    mode = os.fstat(child).st_mode
    if not stat.S_ISDIR(mode):      # O_PATH | O_NOFOLLOW may open the link itself
        os.close(child)
        if stat.S_ISLNK(mode):
            raise _Refused(f"{path} is a symbolic link")
        raise NotADirectoryError(errno.ENOTDIR, "not a directory", path)
    return child


def _step(fd, st, path, name, own, create):
    """Open the directory ``name`` in the open directory ``fd`` (``st`` its
    stat, ``path`` its path) and check the pair; returns the child's
    ``(fd, stat, path)``.

    The child must belong to the current user, or (unless ``own``) to root;
    the parent may be writable by others only if it is sticky and the child is
    the user's; an ``own`` child must be writable by nobody else. A missing
    child is created with mode 0700 when ``create`` (else FileNotFoundError).
    """
    child_path = os.path.join(path, name)
    flags = _DIR_FLAGS if own else _PASS_FLAGS
    if st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX:
        raise _Refused(f"{path} is writable by other users (mode {stat.S_IMODE(st.st_mode):o})")
    try:
        child = _open_dir(fd, name, child_path, flags)
    except FileNotFoundError:
        if not create:
            raise
        try:
            os.mkdir(name, 0o700, dir_fd=fd)
        except FileExistsError:
            pass
        child = _open_dir(fd, name, child_path, flags)
    try:
        cst = os.fstat(child)
        if cst.st_uid != _UID and (own or cst.st_uid != 0):
            raise _Refused(f"{child_path} belongs to uid {cst.st_uid}, not to the current "
                           f"user (uid {_UID}){'' if own else ' or root'}")
        if st.st_mode & 0o022 and cst.st_uid != _UID:
            raise _Refused(f"{path} is writable by other users (mode "
                           f"{stat.S_IMODE(st.st_mode):o}) and {name} in it is not yours")
        if own and cst.st_mode & 0o022:
            raise _Refused(f"{child_path} is writable by other users (mode "
                           f"{stat.S_IMODE(cst.st_mode):o})")
    except BaseException:
        os.close(child)
        raise
    return child, cst, child_path


def _walk(top, below=(), create=False):
    """Handle of the directory ``top/below…`` and the stat of ``top``, every
    directory from ``/`` opened with ``O_NOFOLLOW`` and checked (see
    :func:`_step`; ``top`` and ``below`` are the user's own). The caller
    closes the handle. Raises _Refused, or OSError."""
    names = Path(top).parts[1:]
    fd = os.open("/", _PASS_FLAGS if names else _DIR_FLAGS)
    st, path, top_st = os.fstat(fd), "/", None
    try:
        if st.st_uid not in (_UID, 0):
            raise _Refused(f"/ belongs to uid {st.st_uid}")
        for i, name in enumerate((*names, *below)):
            child, st, path = _step(fd, st, path, name, i >= len(names) - 1, create)
            os.close(fd)
            fd = child
            if i == len(names) - 1:
                top_st = st
        return fd, top_st
    except BaseException:
        os.close(fd)
        raise


def _write_file(fd, name, data, exclusive=False):
    """Write ``name`` in the directory ``fd`` atomically (mode 0600): a new
    temporary file renamed over it or, when ``exclusive``, linked to it, so
    that an existing file is kept."""
    tmp = f".{name}.{secrets.token_hex(8)}.tmp"
    wfd = os.open(tmp, _WRITE_FLAGS, 0o600, dir_fd=fd)
    try:
        with os.fdopen(wfd, "wb") as f:
            f.write(data)
        if exclusive:
            try:
                os.link(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
            except FileExistsError:
                pass
            os.unlink(tmp, dir_fd=fd)
        else:
            os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=fd)
        except OSError:
            pass
        raise


def _read_key(fd, top):
    """The authentication key kept in the top folder (handle ``fd``), made at first use."""
    for _ in range(2):
        try:
            kfd = os.open(_KEY_NAME, _READ_FLAGS, dir_fd=fd)
        except FileNotFoundError:
            _write_file(fd, _KEY_NAME, secrets.token_bytes(_KEY_BYTES), exclusive=True)
            continue
        with os.fdopen(kfd, "rb") as f:
            st, key = os.fstat(f.fileno()), f.read(_KEY_BYTES + 1)
        if (not stat.S_ISREG(st.st_mode) or st.st_uid != _UID or st.st_mode & 0o077
                or len(key) != _KEY_BYTES):
            raise _Refused(f"{os.path.join(top, _KEY_NAME)} is not a private "
                           f"{_KEY_BYTES}-byte file of the current user")
        return key
    raise FileNotFoundError(os.path.join(top, _KEY_NAME))


def _candidates():
    """Top folders to try: under ``$NUMBA_CACHE_DIR``, under the user cache, in
    the temporary folder; each root's symbolic links resolved once, here."""
    roots = []
    if os.environ.get("NUMBA_CACHE_DIR"):
        roots.append((os.environ["NUMBA_CACHE_DIR"], "liedyn"))
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    try:
        roots.append((xdg if os.path.isabs(xdg) else os.path.join(Path.home(), ".cache"),
                      "liedyn"))
    except RuntimeError:    # no home directory
        pass
    roots.append((tempfile.gettempdir(), f"liedyn-kernels-{_UID}"))
    return [os.path.join(os.path.realpath(root), name) for root, name in roots]


def _choose_folder():
    """``(folder or None, [reasons for refused folders])``; pins the top folder."""
    global _pin
    name = f"numba-{_source_hash()}"
    refused = []
    for top in _candidates():
        if top in _refused_tops:
            continue
        try:
            fd, st = _walk(top, create=True)
            try:
                key = _read_key(fd, top)
                vfd = _step(fd, st, top, name, True, True)[0]
                try:
                    os.utime(vfd)            # last use, read by _prune
                    try:
                        os.stat(_install_mark(), dir_fd=vfd, follow_symlinks=False)
                    except FileNotFoundError:
                        _write_file(vfd, _install_mark(), b"", exclusive=True)
                finally:
                    os.close(vfd)
            finally:
                os.close(fd)
        except _Refused as exc:
            refused.append(str(exc))
            _refused_tops.add(top)
            continue
        except OSError:             # not creatable or not writable: the next one
            continue
        _pin = (top, (st.st_dev, st.st_ino), key)
        return os.path.join(top, name), refused
    _pin = None
    return None, refused


def _warn_refused(refused):
    then = (f"caching kernels in {_folder} instead" if _folder is not None else
            "compiling kernels without a disk cache, again in every process")
    warnings.warn(f"liedyn: refused the kernel cache folder: {'; '.join(refused)}. Cache files "
                  f"are code that later processes run, so every folder above them must be "
                  f"yours or root's and writable by nobody else; {then}.",
                  RuntimeWarning, stacklevel=3)


def cache_folder():
    """The folder compiled kernels of this source version are cached in.

    Chosen, created and checked at the first call in a process (see the
    module docstring); ``None`` when no folder can be trusted or written.

    Warns
    -----
    RuntimeWarning
        Once, naming each refused folder and why.
    """
    global _folder, _folder_chosen
    if not _folder_chosen:
        _folder_chosen = True
        refused = []
        if _POSIX:
            _folder, refused = _choose_folder()
        if refused:
            _warn_refused(refused)
    return _folder


def _refuse_current(reason):
    """The pinned folder failed a later check: refuse it, choose another, warn."""
    global _folder
    _refused_tops.add(_pin[0])
    _folder, refused = _choose_folder()
    _warn_refused([reason, *refused])


def _open_kernel_dir(sub, create):
    """Handle of the sub-folder ``sub`` of the cache folder, every directory
    from ``/`` checked now and the top folder the one pinned at first use."""
    top, ident, _ = _pin
    fd, st = _walk(top)
    try:
        if (st.st_dev, st.st_ino) != ident:
            raise _Refused(f"{top} was replaced by another folder after this process "
                           f"first used it")
        vfd = _step(fd, st, top, os.path.basename(_folder), True, create)
    finally:
        os.close(fd)
    try:
        return _step(vfd[0], vfd[1], vfd[2], sub, True, create)[0]
    finally:
        os.close(vfd[0])


def _tag(name, body):
    """HMAC-SHA-256 of a cache file's place (version folder, sub-folder, name) and body."""
    return hmac.new(_pin[2], _MAGIC + name.encode() + b"\0" + body, hashlib.sha256).digest()


def _sealed(name, body):
    return _MAGIC + _tag(name, body) + body


def _read_authentic(fd, name, place):
    """The body of the cache file ``name`` in the directory ``fd`` after
    checking its tag (``place`` is what the tag covers); None when missing.
    Raises ValueError when the file is not an authentic cache file."""
    try:
        rfd = os.open(name, _READ_FLAGS, dir_fd=fd)
    except FileNotFoundError:
        return None
    with os.fdopen(rfd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise ValueError("not a regular file")
        data = f.read()
    n = len(_MAGIC)
    if not data.startswith(_MAGIC) or len(data) < n + 32:
        raise ValueError("not a liedyn cache file")
    if not hmac.compare_digest(data[n:n + 32], _tag(place, data[n + 32:])):
        raise ValueError("authentication failed (HMAC-SHA-256 mismatch)")
    return data[n + 32:]


def compiling_ahead():
    """Silence the first-compilation notice: the caller reports progress itself."""
    global _announce
    _announce = False


def compiled_count():
    """Number of kernel signatures compiled in this process (cache misses)."""
    return _compiled


def _warn_once(key, message):
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, RuntimeWarning, stacklevel=3)


def _prune(current):
    """Remove cache folders of other source versions, next to ``current``.

    Looks only at entries of the (checked, pinned) top folder named
    ``numba-<16 hex>``, that are directories (never symbolic links, never
    followed) owned by the current user. Each folder holds an empty
    ``install-<hash of the installation's path>`` file per installation that
    used it; this installation's is removed from the others, since it now runs
    ``current``. A folder is removed whole when that leaves it without any, or
    when nothing in it was used for 30 days (an installation since removed or
    upgraded). Folders other installations use are kept.
    """
    now, mark = time.time(), _install_mark()
    try:
        fd, _ = _walk(_pin[0])
    except (_Refused, OSError):
        return
    try:
        for name in os.listdir(fd):
            if name == os.path.basename(current) or not _FOLDER_NAME.fullmatch(name):
                continue
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                if not stat.S_ISDIR(st.st_mode) or st.st_uid != _UID:
                    continue
                vfd = os.open(name, _DIR_FLAGS, dir_fd=fd)
                try:
                    inside = os.listdir(vfd)
                    last_use = max([st.st_mtime] + [
                        os.stat(n, dir_fd=vfd, follow_symlinks=False).st_mtime for n in inside])
                    marks = {n for n in inside if _INSTALL_MARK.fullmatch(n)}
                    if mark in marks:
                        os.unlink(mark, dir_fd=vfd)
                finally:
                    os.close(vfd)
                if (mark in marks and len(marks) == 1) or now - last_use > _STALE_SECONDS:
                    shutil.rmtree(name, dir_fd=fd)
            except OSError:
                continue
    finally:
        os.close(fd)


def _group(py_func):
    """The kernel group of a kernel: its module."""
    return getattr(py_func, "__module__", None) or "?"


def _first_compile(folder, py_func):
    """At a cache miss: once per process prune and say what is happening
    (naming the kernel's group), then one short line per further group."""
    global _first_compile_done
    group, name = _group(py_func), getattr(py_func, "__name__", "?")
    first = not _first_compile_done
    if first:
        _first_compile_done = True
        if folder is not None:
            _prune(folder)
    if not _announce or group in _groups_announced:
        return
    _groups_announced.add(group)
    if not first:
        print(f"liedyn: compiling the {group} kernels ({name} first)", file=sys.stderr,
              flush=True)
        return
    where = (f"cached in {folder} for later processes and other installations of this "
             f"version" if folder is not None else
             "not cached (no usable cache folder), so every process compiles them again")
    print(f"liedyn: compiling numba kernels on first use, now the {group} kernels ({name} "
          f"first): 5 to 40 s per algorithm, {_COMPILE_SECONDS} for all of them; {where}. "
          f"`python -m liedyn.compile` compiles them all ahead of time.",
          file=sys.stderr, flush=True)


if HAVE_NUMBA:
    from numba.core import caching as _caching
    from numba.core.compiler import CompileResult as _CompileResult
    from numba.core.dispatcher import Dispatcher as _Dispatcher
    from numba.core.serialize import dumps as _dumps

    class _KernelCache(_caching._Cache):
        """The cache numba consults for one of our dispatchers.

        Each load and save opens the kernel's sub-folder through
        :func:`_open_kernel_dir` (a refused folder is replaced by the next
        candidate, with one warning) and reads or writes authenticated files
        through that handle: an index ``BASE.nbi`` mapping numba's key
        (signature, target, bytecode) to a data file ``BASE.<i>.nbc`` holding
        the compiled result. A file that fails its tag or does not load is
        discarded (one warning per process) so that numba compiles it afresh;
        misses are counted and run :func:`_first_compile`.
        """

        def __init__(self, py_func):
            self._py_func = py_func
            self._names = None
            self._enabled = True

        def _ids(self):
            """``(sub-folder, file name base, source stamp)`` of this kernel."""
            if self._names is None:
                f = self._py_func
                py_file = os.path.abspath(inspect.getfile(f))
                rel = os.path.relpath(os.path.dirname(py_file), _PKG_DIR)
                if rel == os.pardir or rel.startswith(os.pardir + os.sep):
                    # outside the package: numba's sub-folder (keyed on the
                    # file's path) and a digest of the file as the stamp
                    sub = _caching._CacheLocator.get_suitable_cache_subpath(py_file)
                    stamp = hashlib.sha256(Path(py_file).read_bytes()).hexdigest()
                else:       # the folder's hash covers the package's sources
                    sub = ".".join(["kernels-liedyn",
                                    *([] if rel == os.curdir else rel.split(os.sep))])
                    stamp = None
                qualname = getattr(f, "__qualname__", f.__name__)
                base = (f"{os.path.splitext(os.path.basename(py_file))[0]}."
                        f"{qualname.replace('<', '').replace('>', '')}-"
                        f"{f.__code__.co_firstlineno}.py{sys.version_info[0]}"
                        f"{sys.version_info[1]}{getattr(sys, 'abiflags', '')}")
                self._names = sub, base, stamp
            return self._names

        def _place(self, name):
            return f"{os.path.basename(_folder)}/{self._ids()[0]}/{name}"

        @property
        def cache_path(self):
            folder = cache_folder()
            return None if folder is None else os.path.join(folder, self._ids()[0])

        def enable(self):
            self._enabled = True

        def disable(self):
            self._enabled = False

        def flush(self):
            if self._enabled and cache_folder() is not None:
                try:
                    fd = _open_kernel_dir(self._ids()[0], False)
                except (_Refused, OSError):
                    return
                try:
                    self._discard(fd)
                finally:
                    os.close(fd)

        def _attempt(self, action, *args):
            """``action(*args)``; a refused folder is replaced once (see
            :func:`_refuse_current`) and the action tried in the new one."""
            for _ in range(2):
                if cache_folder() is None:
                    return None
                try:
                    return action(*args)
                except _Refused as exc:
                    _refuse_current(str(exc))
            return None

        def _index(self, fd):
            """The index: ``{key: data file name}``; empty when missing or stale."""
            name = self._ids()[1] + ".nbi"
            body = _read_authentic(fd, name, self._place(name))
            if body is None:
                return {}
            version, stamp, overloads = pickle.loads(body)
            if version != _numba.__version__ or stamp != self._ids()[2]:
                return {}
            return overloads

        def _discard(self, fd):
            """Delete this kernel's index and data files."""
            base = self._ids()[1]
            for name in os.listdir(fd):
                if name == base + ".nbi" or (name.startswith(base + ".")
                                             and name.endswith(".nbc")):
                    try:
                        os.unlink(name, dir_fd=fd)
                    except FileNotFoundError:   # another process was quicker
                        pass

        def _load(self, sig, target_context):
            key = _caching.Cache._index_key(self, sig, target_context.codegen())
            try:
                fd = _open_kernel_dir(self._ids()[0], False)
            except FileNotFoundError:
                return None
            try:
                name = self._index(fd).get(key)
                body = None if name is None else _read_authentic(fd, name, self._place(name))
                if body is None:
                    return None
                return _CompileResult._rebuild(target_context, *pickle.loads(body))
            except _Refused:
                raise
            except Exception as exc:
                self._discard(fd)
                _warn_once(("discard", _folder),
                           f"liedyn: discarded unreadable compiled kernels in "
                           f"{self.cache_path} ({_describe(exc)}); recompiling them, and any "
                           f"other damaged ones of this process without another warning.")
                return None
            finally:
                os.close(fd)

        def _save(self, sig, cres):
            key = _caching.Cache._index_key(self, sig, cres.codegen)
            payload = _dumps(cres._reduce())
            sub, base, stamp = self._ids()
            fd = _open_kernel_dir(sub, True)
            try:
                try:
                    overloads = self._index(fd)
                except Exception:           # unreadable: written afresh
                    overloads = {}
                name = overloads.get(key)
                if name is None:
                    used = set(overloads.values())
                    name = next(n for n in (f"{base}.{i}.nbc" for i in itertools.count(1))
                                if n not in used)
                    overloads[key] = name
                _write_file(fd, name, _sealed(self._place(name), payload))
                index = base + ".nbi"
                _write_file(fd, index, _sealed(self._place(index), _dumps(
                    (_numba.__version__, stamp, overloads))))
            finally:
                os.close(fd)

        def load_overload(self, sig, target_context):
            global _compiled
            cres = None
            if self._enabled:
                target_context.refresh()
                try:
                    cres = self._attempt(self._load, sig, target_context)
                except Exception as exc:    # e.g. a folder the user may not enter
                    _warn_once(("read", _folder),
                               f"liedyn: cannot read compiled kernels in {_folder} "
                               f"({_describe(exc)}); compiling them instead.")
            if cres is None:
                _compiled += 1
                _first_compile(cache_folder(), self._py_func)
            return cres

        def save_overload(self, sig, cres):
            if not self._enabled or any(not x.can_cache for x in cres.lifted):
                return
            if cres.library.has_dynamic_globals:
                return
            try:
                self._attempt(self._save, sig, cres)
            except Exception as exc:
                self._enabled = False
                _warn_once(("save", _folder),
                           f"liedyn: cannot save compiled kernels in {self.cache_path} "
                           f"({_describe(exc)}); they will be compiled again in the next "
                           f"process.")


def _describe(exc):
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= 200 else text[:197] + "..."


# Floating-point contraction only: a·b + c may become one fused multiply-add
# (one rounding instead of two, never less accurate); no reassociation, no
# assumptions about NaN or infinities, so results stay deterministic.
FASTMATH = {"contract"}


def njit(fn=None, *, inline=False):
    """Compile ``fn`` with numba (cached, no Python fallback, GIL released)
    when available.

    ``inline=True`` inlines the function into its callers at numba's IR level,
    for the small per-body helpers called in the innermost loops. Parallel
    loops are not used: the batch functions run plain threads over these
    kernels (:mod:`liedyn.algorithm.batch`), so no OpenMP or TBB runtime is loaded.
    """
    if fn is None:
        return lambda f: njit(f, inline=inline)
    if _numba is None:  # pragma: no cover
        return fn
    kernel = _numba.njit(nogil=True, fastmath=FASTMATH, inline="always" if inline else "never")(fn)
    if isinstance(kernel, _Dispatcher):      # not with NUMBA_DISABLE_JIT=1
        kernel._cache = _KernelCache(fn)
    return kernel


class Kernel:
    """A compiled entry point called without numba's per-call type dispatch.

    Every public function calls its kernel with arguments of fixed types: the
    two handles (:class:`liedyn.Model` data and :class:`liedyn.Workspace`
    data), C-contiguous float64 arrays of fixed dimensions checked by
    :func:`liedyn._checks.plain`, ints and bools. Numba's dispatcher would
    work out those types again on every call (about a microsecond for the two
    handles); instead the first call compiles (or loads from the cache) the
    one signature and later calls go straight to its entry point.
    ``Kernel(f).call(*args)`` is the call. Under ``LIEDYN_CHECK_KERNEL_TYPES=1``
    (set by the test suite) every call checks that its argument types are the
    compiled ones.
    """

    def __init__(self, dispatcher):
        self.dispatcher = dispatcher
        self.signature = None
        if not JIT:                                 # interpreted
            self.call = dispatcher
        else:
            self.call = self._first_call

    @staticmethod
    def _types(args):
        out = []
        for a in args:
            t = _numba.typeof(a)
            if isinstance(t, _numba.types.Array) and not t.mutable:
                t = t.copy(readonly=False)        # inputs are only read
            out.append(t)
        return tuple(out)

    def _first_call(self, *args):
        return self.prepare(*args)(*args)

    def prepare(self, *args):
        """Compile (or load) the kernel for the types of ``args`` without
        running it, e.g. before several threads call it; returns ``call``."""
        if self.call == self._first_call:
            self.signature = self._types(args)
            self._entry = self.dispatcher.compile(self.signature)
            self.call = self._checked_call if CHECK_KERNEL_TYPES else self._entry
        return self.call

    def _checked_call(self, *args):
        got = self._types(args)
        if got != self.signature:
            raise TypeError(f"kernel {self.dispatcher.__name__}: called with {got}, "
                            f"compiled for {self.signature}")
        return self._entry(*args)


CHECK_KERNEL_TYPES = os.environ.get("LIEDYN_CHECK_KERNEL_TYPES") == "1"
