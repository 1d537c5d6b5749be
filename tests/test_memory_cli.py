"""`deepmem memory …` end to end through the CLI entry point, on real files."""

from __future__ import annotations

import json

import pytest

from deepmem.cli import main


@pytest.fixture(autouse=True)
def global_root(tmp_path, monkeypatch):
    """Every test gets its own global memory folder."""
    monkeypatch.setenv("DEEP_MEMORY_GLOBAL_ROOT", str(tmp_path / "global"))


def run(capsys, *argv):
    code = main(["memory", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_add_search_and_batch_search(tmp_path, capsys):
    root = str(tmp_path)
    assert run(capsys, "add", "Releases are cut from the main branch on Fridays", "--type", "decision", "--root", root)[0] == 0
    assert run(capsys, "add", "数据库连接池的最大连接数设置为五十。", "--type", "fact", "--root", root)[0] == 0
    code, out, _ = run(capsys, "search", "连接池最大连接数", "-k", "1", "--json", "--root", root)
    assert code == 0 and "连接池" in json.loads(out)[0]["text"]
    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"id": "q1", "query": "when are releases cut"}\n{"id": "q2", "query": "连接池"}\n')
    code, out, _ = run(capsys, "search", "--batch", str(queries), "-k", "10", "--json", "--root", root)
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and [line["id"] for line in lines] == ["q1", "q2"]
    _, listed, _ = run(capsys, "list", "--json", "--root", root)
    ids = {entry["text"][:4]: entry["id"] for entry in json.loads(listed)}
    assert [line["hits"][0] for line in lines] == [ids["Rele"], ids["数据库连"]]


def test_explain_prints_terms_similarity_and_ranks(tmp_path, capsys):
    run(capsys, "add", "getUserName caches results for five minutes", "--type", "gotcha", "--root", str(tmp_path))
    code, out, _ = run(capsys, "search", "getUserName", "--explain", "--root", str(tmp_path))
    assert code == 0
    assert "getusername=" in out and "cosine" in out and "fused" in out and "(rank 1" in out


def test_import_jsonl_keeps_every_id_and_round_trips(tmp_path, capsys):
    root, copy = tmp_path / "a", tmp_path / "b"
    source = tmp_path / "turns.jsonl"
    source.write_text(
        '{"id": "D1:1", "text": "Caroline: I went to a support group yesterday", "time": "1:56 pm on 8 May, 2023"}\n'
        '{"id": "D1:2", "text": "Caroline: I went to a support group yesterday"}\n'
        '{"id": "D1:3", "text": "Melanie: that sounds great", "type": "fact"}\n'
    )
    code, out, _ = run(capsys, "import", str(source), "--json", "--root", str(root))
    assert code == 0 and json.loads(out) == {"imported": 3, "replaced": 0, "skipped": 0}
    for form, name in (("json", "export.json"), ("markdown", "export.md")):
        target = tmp_path / name
        assert run(capsys, "export", "--scope", "project", "--format", form, "-o", str(target), "--root", str(root))[0] == 0
        assert run(capsys, "import", str(target), "--root", str(copy / form))[0] == 0
        _, original, _ = run(capsys, "list", "--scope", "project", "--json", "--root", str(root))
        _, copied, _ = run(capsys, "list", "--scope", "project", "--json", "--root", str(copy / form))
        assert json.loads(copied) == json.loads(original)
    code, out, _ = run(capsys, "import", str(source), "--dedup", "--json", "--root", str(tmp_path / "c"))
    assert json.loads(out) == {"imported": 2, "replaced": 0, "skipped": 1}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["search", ""], "empty search query"),
        (["add", "x" * 1_000_000], "limit"),
        (["add", "bell\x07"], "control characters"),
        (["add", "   "], "empty"),
        (["forget", "anything"], "nothing matches"),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, argv, message):
    code, _, err = run(capsys, *argv, "--root", str(tmp_path)) if argv[0] != "forget" else (None, None, None)
    if argv[0] == "forget":
        code, out, err = run(capsys, *argv, "--yes", "--root", str(tmp_path))
        assert code == 1 and message in out
        return
    assert code == 2
    assert err.startswith("deepmem: error: ") and message in err and err.count("\n") == 1
    assert not (tmp_path / ".deep-memory" / "MEMORY.md").exists()


def test_bad_import_line_is_named_and_nothing_is_written(tmp_path, capsys):
    source = tmp_path / "bad.jsonl"
    source.write_text('{"id": "a", "text": "fine"}\n{"id": "b", "text": "bad\\u0001"}\n')
    code, _, err = run(capsys, "import", str(source), "--root", str(tmp_path))
    assert code == 2 and "'b'" in err and "control" in err
    source.write_text('{"id": "a", "text": "fine"}\nnot json\n')
    code, _, err = run(capsys, "import", str(source), "--root", str(tmp_path))
    assert code == 2 and "bad.jsonl:2" in err
    assert not (tmp_path / ".deep-memory" / "MEMORY.md").exists()


def test_forget_asks_for_confirmation_when_not_interactive(tmp_path, capsys):
    run(capsys, "add", "The staging cluster is called atlas", "--type", "fact", "--root", str(tmp_path))
    code, _, err = run(capsys, "forget", "staging cluster", "--root", str(tmp_path))
    assert code == 2 and "--yes" in err
    code, out, _ = run(capsys, "forget", "staging cluster", "--yes", "--root", str(tmp_path))
    assert code == 0 and out.startswith("forgot [")
