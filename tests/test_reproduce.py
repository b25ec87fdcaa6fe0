"""experiments.reproduce: a missing study is skipped, a failing one reported;
the README states per study when, where and at which code version it ran,
keeps the studies of earlier runs when a subset reruns, and lists every
study's output, figures and CSV tables; a study's targets (rows of its CSV
marked met or missed) are counted in its status and the missed ones listed;
the speed paragraph lives in ``paper_figures/README.md`` and the top-level
README is never rewritten; every study module takes ``--out`` (its ``main``
runs through the fake module here, the real studies in the main job)."""

import json
import os
import signal
import sys
import time
import types

import pytest

from experiments import _readme, _targets, reproduce
from tests.helpers import ROOT, run_python


def test_missing_study_is_skipped(tmp_path):
    res = reproduce.run_study("no_such_study", "nothing", [], out_dir=tmp_path)
    assert res.status == "skipped" and "not in this checkout" in res.message


def _fake(monkeypatch, tmp_path):
    def good_main(argv):
        print("table row 1")
        print("measured 3 points in this run, kept 0")
        (tmp_path / "good.csv").write_text("machine,code,a,b\nhost,abc,1,2\n")
        (tmp_path / "good.png").write_bytes(b"")
        return None

    def bad_main(argv):
        raise RuntimeError("boom")

    for name, main in (("fake_good", good_main), ("fake_bad", bad_main)):
        monkeypatch.setitem(sys.modules, f"experiments.{name}",
                            types.SimpleNamespace(main=main, __spec__=object()))


def test_studies_run_and_are_summarised_with_their_provenance(tmp_path, monkeypatch):
    _fake(monkeypatch, tmp_path)
    good = reproduce.run_study("fake_good", "a good study", ["--out", str(tmp_path)],
                               out_dir=tmp_path)
    bad = reproduce.run_study("fake_bad", "a bad study", [], out_dir=tmp_path)
    missing = reproduce.run_study("no_such_study", "absent", [], out_dir=tmp_path)
    assert good.status == "ok" and good.output.startswith("table row 1")
    assert good.files == ["good.csv", "good.png"]
    assert good.code and good.machine and good.started.endswith("UTC")
    assert bad.status == "failed" and "boom" in bad.message
    log = {r.name: vars(r) for r in (good, bad, missing)}
    reproduce.write_readme(log, out_dir=tmp_path)
    text = (tmp_path / "README.md").read_text()
    assert f"| `fake_good` | a good study | ok | {good.started} | `{good.code}` |" in text
    assert f"on {good.machine}, code `{good.code}`" in text
    assert "| `fake_bad` | a bad study | failed |" in text
    assert "Skipped: experiments.no_such_study is not in this checkout." in text
    assert "![good.png](good.png)" in text and "| 1 | 2 |" in text and "boom" in text
    assert "| a | b |" in text                      # provenance columns stated above, not repeated
    assert "Values the paper does not print" in text and "cant angle" in text
    assert "Every figure and CSV below is regenerated" not in text
    from experiments._provenance import memory_gb, memory_text
    assert memory_gb() > 0.1 and f"this machine's {memory_text()} (shared" in text


def test_a_subset_run_keeps_the_other_studies(tmp_path, monkeypatch):
    _fake(monkeypatch, tmp_path)
    monkeypatch.setattr(reproduce, "STUDIES", (("fake_good", "a good study", False),
                                               ("fake_bad", "a bad study", False)))
    assert reproduce.main(["--out", str(tmp_path), "--only", "fake_bad"]) == 1
    assert reproduce.main(["--out", str(tmp_path), "--only", "fake_good"]) == 0
    log = reproduce.load_log(tmp_path)
    assert set(log) == {"fake_good", "fake_bad"}
    text = (tmp_path / "README.md").read_text()
    assert "fake_bad" in text and "fake_good" in text


def test_ctrl_c_stops_the_main_job_after_the_study_it_interrupts(tmp_path, monkeypatch):
    """A SIGINT during a study that catches it to keep its finished part (as
    the benchmarks do), and during one that does not: either way that study
    is recorded as interrupted, the studies after it do not run, and the
    job returns 130."""
    ran = []

    def keeps_its_part(argv):
        ran.append("keeps")
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
        except KeyboardInterrupt:
            print("interrupted: writing the sections that finished")

    def stops(argv):
        ran.append("stops")
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)

    def after(argv):
        ran.append("after")

    for name, main in (("fake_keeps", keeps_its_part), ("fake_stops", stops),
                       ("fake_after", after)):
        monkeypatch.setitem(sys.modules, f"experiments.{name}",
                            types.SimpleNamespace(main=main, __spec__=object()))
    for first in ("fake_keeps", "fake_stops"):
        ran.clear()
        monkeypatch.setattr(reproduce, "STUDIES", ((first, "first", False),
                                                   ("fake_after", "after", False)))
        assert reproduce.main(["--out", str(tmp_path)]) == 130
        assert ran == [first.split("_")[1]]
        assert reproduce.load_log(tmp_path)[first]["status"] == "interrupted"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_every_study_takes_out_and_full():
    """Each study's argument parser knows ``--out`` and ``--full``: ``--help``
    of every study, in a subprocess (the studies import their plotting code)."""
    code = ("import contextlib, importlib, io, json, sys\n"
            "out = {}\n"
            f"for name in {[s for s, _, _ in reproduce.STUDIES]!r}:\n"
            "    buf = io.StringIO()\n"
            "    with contextlib.redirect_stdout(buf):\n"
            "        try:\n"
            "            importlib.import_module('experiments.' + name).main(['--help'])\n"
            "        except SystemExit:\n"
            "            pass\n"
            "    out[name] = buf.getvalue()\n"
            "print(json.dumps(out))\n")
    for name, text in json.loads(run_python(code)).items():
        assert "--out" in text and "--full" in text, name


def test_targets_are_read_from_either_row_form():
    rows = [dict(section="targets", quantity="ID r=0 / rnea (limit 3)", value="2.7", unit="met"),
            dict(section="targets", quantity="FD r=5 / aba (limit 3.3)", value="3.8",
                 unit="missed"),
            dict(section="N=101", quantity="ID r=0", value="19", unit="us")]
    assert _targets.targets_in(rows) == [("ID r=0 / rnea (limit 3)", True),
                                         ("FD r=5 / aba (limit 3.3)", False)]
    rows = [dict(robot="talos", function="mass_matrix", workspace="yes", met="no"),
            dict(robot="talos", function="mass_matrix", workspace="no", met=""),
            dict(robot="talos", function="gravity_vector", workspace="yes", met="yes",
                 target="2.000000e+00"),
            dict(robot="solo12", quantity="constrained / unconstrained", r="0", met="no",
                 target="0.5")]
    assert _targets.targets_in(rows) == [("talos, mass_matrix", False),
                                         ("talos, gravity_vector (limit 2)", True),
                                         ("solo12, constrained / unconstrained, r = 0 (limit 0.5)",
                                          False)]
    assert _targets.status_text("ok", []) == "ok"
    assert _targets.status_text("ok", [["a", True], ["b", False]]) == "ok, 1 of 2 targets met"
    assert _targets.status_text("failed", [["a", True]]) == "failed"


def test_missed_targets_are_reported_in_the_status_and_the_readme(tmp_path, monkeypatch, capsys):
    def main(argv):
        (tmp_path / "aims.csv").write_text(
            "machine,code,section,quantity,value,unit\n"
            "host,abc,targets,fast enough (limit 2),1.5,met\n"
            "host,abc,targets,small enough (limit 1),1.2,missed\n"
            "host,abc,N=7,other,3,us\n")
        (tmp_path / "more.csv").write_text("robot,function,met\ntalos,crba,yes\n")

    monkeypatch.setitem(sys.modules, "experiments.fake_aims",
                        types.SimpleNamespace(main=main, __spec__=object()))
    monkeypatch.setattr(reproduce, "STUDIES", (("fake_aims", "a study with targets", False),))
    assert reproduce.main(["--out", str(tmp_path)]) == 0      # missed targets do not fail it
    summary = capsys.readouterr().out.split("=== summary")[-1]
    assert "ok, 2 of 3 targets met" in summary and "missed: small enough (limit 1)" in summary
    log = reproduce.load_log(tmp_path)
    assert log["fake_aims"]["status"] == "ok" and len(log["fake_aims"]["targets"]) == 3
    text = (tmp_path / "README.md").read_text()
    assert "| `fake_aims` | a study with targets | ok, 2 of 3 targets met |" in text
    assert "Targets missed: small enough (limit 1)." in text


def test_readme_records_without_targets_still_render(tmp_path):
    """Log records written before targets were recorded have no ``targets``."""
    record = vars(reproduce.StepResult("old", "an old study", "ok", 1.0, started="then",
                                       machine="host", code="abc"))
    del record["targets"]
    reproduce.write_readme({"old": record}, out_dir=tmp_path)
    assert "| `old` | an old study | ok | then | `abc` |" in (tmp_path / "README.md").read_text()


def test_speed_paragraph_is_what_the_committed_tables_give():
    """The speed paragraph of ``paper_figures/README.md`` cannot drift from the
    CSVs: it must be what :mod:`experiments._readme` writes from them."""
    text = (ROOT / "paper_figures" / "README.md").read_text()
    assert _readme.block(text, "speed") == _readme.paragraph_from(ROOT / "paper_figures"), \
        "paper_figures/README.md's speed paragraph differs from paper_figures/bench_speed.csv: " \
        "rerun python -m experiments.reproduce --only bench_speed (it rewrites both)"


def test_the_top_level_readme_points_to_the_measured_numbers(tmp_path):
    """The main job leaves ``README.md`` alone: no generated block, a pointer to
    ``paper_figures/README.md`` and the command that measures; a README written
    into another folder carries the paragraph when that folder has the CSVs."""
    text = (ROOT / "README.md").read_text()
    speed = text.split("## Speed", 1)[1].split("\n## ", 1)[0]
    assert "<!-- speed:begin -->" not in text
    assert "(paper_figures/README.md)" in speed and "python -m experiments.bench_speed" in speed
    for name in ("bench_speed.csv", "bench_summary.csv", "bench_closed_form.csv"):
        (tmp_path / name).write_bytes((ROOT / "paper_figures" / name).read_bytes())
    reproduce.write_readme({}, out_dir=tmp_path)
    written = (tmp_path / "README.md").read_text()
    assert _readme.block(written, "speed") == _readme.paragraph_from(tmp_path)
    (tmp_path / "empty").mkdir()
    reproduce.write_readme({}, out_dir=tmp_path / "empty")
    assert "speed:begin" not in (tmp_path / "empty" / "README.md").read_text()


def test_marked_block_reads_back():
    text = "a\n" + _readme.marked("speed", "new\ntext") + "\nb\n"
    assert text == "a\n<!-- speed:begin -->\nnew\ntext\n<!-- speed:end -->\nb\n"
    assert _readme.block(text, "speed") == "new\ntext"
    with pytest.raises(ValueError, match="block"):
        _readme.block("no markers", "speed")
