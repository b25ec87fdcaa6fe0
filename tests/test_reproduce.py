"""experiments.reproduce: a missing study is skipped, a failing one reported,
and the README lists every study with its output, figures and CSV tables."""

import sys
import types

from experiments import reproduce


def test_missing_study_is_skipped(tmp_path):
    res = reproduce.run_study("no_such_study", "nothing", [], out_dir=tmp_path)
    assert res.status == "skipped" and "not in this checkout" in res.message


def test_studies_run_and_are_summarised(tmp_path, monkeypatch):
    def good_main(argv):
        print("table row 1")
        (tmp_path / "good.csv").write_text("a,b\n1,2\n")
        (tmp_path / "good.png").write_bytes(b"")
        return None

    def bad_main(argv):
        raise RuntimeError("boom")

    for name, main in (("fake_good", good_main), ("fake_bad", bad_main)):
        monkeypatch.setitem(sys.modules, f"experiments.{name}",
                            types.SimpleNamespace(main=main, __spec__=object()))
    good = reproduce.run_study("fake_good", "a good study", [], out_dir=tmp_path)
    bad = reproduce.run_study("fake_bad", "a bad study", [], out_dir=tmp_path)
    missing = reproduce.run_study("no_such_study", "absent", [], out_dir=tmp_path)
    assert good.status == "ok" and good.output == "table row 1"
    assert good.files == ["good.csv", "good.png"]
    assert bad.status == "failed" and "boom" in bad.message
    reproduce.write_readme([good, bad, missing], 1.0, [], out_dir=tmp_path)
    text = (tmp_path / "README.md").read_text()
    assert "| `fake_good` | a good study | ok |" in text
    assert "| `fake_bad` | a bad study | failed |" in text
    assert "Skipped: experiments.no_such_study is not in this checkout." in text
    assert "![good.png](good.png)" in text and "| 1 | 2 |" in text and "boom" in text
