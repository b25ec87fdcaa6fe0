"""experiments.reproduce: a missing study is skipped, a failing one reported;
the README states per study when, where and at which code version it ran,
keeps the studies of earlier runs when a subset reruns, and lists every
study's output, figures and CSV tables; every study module takes ``--out``
(its ``main`` runs through the fake module here, the real studies in the
main job)."""

import json
import sys
import types

import pytest

from experiments import _readme, reproduce
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


def test_readme_speed_paragraph_is_what_the_committed_tables_give():
    """The top-level README's speed paragraph cannot drift from the CSVs:
    it must be what :mod:`experiments._readme` writes from them."""
    text = (ROOT / "README.md").read_text()
    assert _readme.block(text, "speed") == _readme.paragraph_from(ROOT / "paper_figures"), \
        "README.md's speed paragraph differs from paper_figures/bench_speed.csv: rerun " \
        "python -m experiments.reproduce --only bench_speed (it rewrites both)"


def test_replace_block_rewrites_only_the_marked_lines():
    text = "a\n<!-- speed:begin -->\nold\ntext\n<!-- speed:end -->\nb\n"
    assert _readme.replace_block(text, "speed", "new") == \
        "a\n<!-- speed:begin -->\nnew\n<!-- speed:end -->\nb\n"
    with pytest.raises(ValueError, match="block"):
        _readme.replace_block("no markers", "speed", "new")
