"""experiments._progress: a tqdm bar on a terminal, plain lines elsewhere
(one per stage of a loop, counted updates at most every few seconds), and
nothing when disabled."""

import io

from experiments import _progress


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_off_a_terminal_each_stage_is_one_line():
    out = io.StringIO()
    seen = list(_progress.progress(["first", ("second", object()), 3], desc="study", file=out))
    assert len(seen) == 3 and seen[0] == "first"
    lines = out.getvalue().splitlines()
    assert len(lines) == 3 and "\r" not in out.getvalue()
    assert lines[0].startswith("study 1/3: first (") and lines[0].endswith(" s)")
    assert lines[1].startswith("study 2/3: second (") and lines[2].startswith("study 3/3: 3 (")


def test_counted_updates_are_rate_limited_and_the_last_is_shown(monkeypatch):
    clock = iter([0.0, 1.0, 2.0, 7.0, 7.5, 8.0])       # start, then one reading per update
    monkeypatch.setattr(_progress, "_clock", lambda: next(clock))
    out = io.StringIO()
    with _progress.progress(total=5, desc="orders", file=out) as bar:
        for _ in range(5):
            bar.update()
    lines = [line.split(" (")[0] for line in out.getvalue().splitlines()]
    assert lines == ["orders 3/5", "orders 5/5"]        # 7 s after the last line, and the end


def test_on_a_terminal_it_is_tqdm_and_disabled_it_is_silent():
    from tqdm import tqdm
    term = _Terminal()
    bar = _progress.progress(range(2), desc="x", file=term)
    assert isinstance(bar, tqdm) and list(bar) == [0, 1]
    bar.close()
    quiet = io.StringIO()
    assert list(_progress.progress(range(2), desc="x", disable=True, file=quiet)) == [0, 1]
    _progress.stage("starting", disable=True, file=quiet)
    assert quiet.getvalue() == ""
    _progress.stage("starting", file=quiet)
    assert quiet.getvalue() == "starting\n"


def test_a_long_call_keeps_printing_and_a_short_one_prints_nothing():
    import time
    out = io.StringIO()
    with _progress.heartbeat("compiling", interval=0.05, file=out):
        time.sleep(0.3)
    lines = out.getvalue().splitlines()
    assert len(lines) >= 2 and all(line.startswith("compiling (") for line in lines)
    quiet = io.StringIO()
    with _progress.heartbeat("compiling", interval=10.0, file=quiet):
        pass
    with _progress.heartbeat("compiling", interval=0.01, disable=True, file=quiet):
        time.sleep(0.05)
    assert quiet.getvalue() == ""
