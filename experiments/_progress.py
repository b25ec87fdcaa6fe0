"""Progress of a long study on stderr: a tqdm bar under a terminal, one line
per stage otherwise (a log file or a CI job, where a bar's carriage returns
pile up into one unreadable line).

:func:`progress` takes the arguments of ``tqdm`` that the studies use
(an iterable or ``total``, ``desc``, ``disable``) and returns a bar or a
:class:`Lines` with the same ``update``, ``close`` and context manager.
:func:`stage` prints one line saying what a study starts next, above a bar
under a terminal; :func:`heartbeat` keeps printing one while a single long
call runs (a compilation, a graph built), so that no stretch of a study
passes without output.
"""

import contextlib
import sys
import threading
import time

__all__ = ["Lines", "heartbeat", "progress", "stage"]

MIN_INTERVAL = 5.0   # s: off a terminal, counted updates closer than this share a line
_clock = time.monotonic


def _terminal(stream):
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:           # a closed stream
        return False


class Lines:
    """What a bar would show, as plain lines: iterating, one line as each
    item starts (``desc k/total: item``); counting (``update``), a line
    ``desc k/total`` at most every :data:`MIN_INTERVAL` seconds and at the
    last; each with the seconds since the start."""

    def __init__(self, iterable=None, total=None, desc="", disable=False, file=None,
                 **_ignored):
        self.iterable, self.desc, self.disable = iterable, desc, disable
        self.file = file if file is not None else sys.stderr
        if total is None and iterable is not None and hasattr(iterable, "__len__"):
            total = len(iterable)
        self.total, self.n = total, 0
        self.start = self.shown = _clock()

    def _line(self, k, now, what=""):
        count = f"{k}/{self.total}" if self.total is not None else f"{k}"
        tail = f": {what}" if what else ""
        print(f"{self.desc} {count}{tail} ({now - self.start:.0f} s)", file=self.file,
              flush=True)

    def __iter__(self):
        for k, item in enumerate(self.iterable, 1):
            if not self.disable:
                self._line(k, _clock(), _name(item))
            yield item
            self.n = k

    def update(self, n=1):
        self.n += n
        now = _clock()
        last = self.total is not None and self.n >= self.total
        if not self.disable and (last or now - self.shown >= MIN_INTERVAL):
            self.shown = now
            self._line(self.n, now)

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def _name(item):
    """A short name of a loop's item: a string or number, or the first such
    entry of a tuple (``(name, step)`` pairs), else nothing."""
    if isinstance(item, tuple) and item:
        item = item[0]
    if isinstance(item, (str, int, float)):
        return str(item)
    return ""


def progress(iterable=None, *, total=None, desc="", disable=False, file=None, **kwargs):
    """A tqdm bar on ``file`` (stderr) when it is a terminal, else :class:`Lines`."""
    file = file if file is not None else sys.stderr
    if _terminal(file):
        from tqdm import tqdm
        return tqdm(iterable, total=total, desc=desc, disable=disable, file=file, **kwargs)
    return Lines(iterable, total=total, desc=desc, disable=disable, file=file)


def stage(text, *, disable=False, file=None):
    """One line on ``file`` (stderr) saying what starts now (through
    ``tqdm.write`` under a terminal, so that an open bar stays whole)."""
    if disable:
        return
    file = file if file is not None else sys.stderr
    if _terminal(file):
        from tqdm import tqdm
        tqdm.write(text, file=file)
    else:
        print(text, file=file, flush=True)


@contextlib.contextmanager
def heartbeat(text, *, interval=15.0, disable=False, file=None):
    """While the block runs, a line ``text (N s)`` every ``interval``
    seconds (:func:`stage`), from a thread; none when the block is quicker."""
    if disable:
        yield
        return
    done = threading.Event()
    start = _clock()

    def beat():
        while not done.wait(interval):
            stage(f"{text} ({_clock() - start:.0f} s)", file=file)
    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
