"""Planning inputs into parts and reading parts back: every kind, item numbers, errors that name
the file and line. No Ray here."""

from __future__ import annotations

import json
import lzma

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from workbench.corpora.readers import read_text, read_xml
from workbench.distributed.inputs import (
    Part,
    input_kind,
    plan_input,
    read_part,
    sentence_from_json,
    sentence_to_json,
)
from workbench.errors import DataError


def read_all(plan, column="text"):
    return [
        pair for part in plan.parts for pair in read_part(Part.from_json(part.to_json()), column)
    ]


def test_kinds_follow_the_name():
    assert input_kind("a/semcor.data.xml.xz") == "xml"
    assert input_kind("x.jsonl") == input_kind("x.ndjson.xz") == "jsonl"
    assert input_kind("x.parquet") == "parquet"
    assert input_kind("wiki.txt") == input_kind("README") == "text"


@pytest.mark.parametrize("trailing_newline", [True, False])
def test_text_parts_cover_every_line_once(tmp_path, trailing_newline):
    lines = ["The bank.", "", "Rates rose again.", "   ", "A", "b c", "last line"]
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(lines) + ("\n" if trailing_newline else ""), encoding="utf-8")
    plan = plan_input(path, 3, shard_size=3, text_column="text")
    assert plan.n_items == 7
    assert [(p.start, p.stop) for p in plan.parts] == [(0, 3), (3, 6), (6, 7)]
    assert [p.name for p in plan.parts] == ["00003-000000", "00003-000001", "00003-000002"]
    assert plan.parts[1].describe() == "corpus.txt lines 4-6"
    got = read_all(plan)
    expected = read_text(path).sentences  # the single-machine reader: same ids, same words
    assert [s.id for _, s in got] == [s.id for s in expected]
    assert [s.words for _, s in got] == [s.words for s in expected]
    assert [item for item, _ in got] == [0, 2, 4, 5, 6]


def test_compressed_text_reads_the_same(tmp_path):
    text = "".join(f"sentence number {i}\n" for i in range(10))
    plain, packed = tmp_path / "c.txt", tmp_path / "c.txt.xz"
    plain.write_text(text, encoding="utf-8")
    packed.write_bytes(lzma.compress(text.encode()))
    a = read_all(plan_input(plain, 0, 4, "text"))
    b = read_all(plan_input(packed, 0, 4, "text"))
    assert [s.words for _, s in a] == [s.words for _, s in b] and len(a) == 10


def test_text_that_is_not_utf8_names_its_line(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"fine line\nalso fine\nbroken \xff\xfe here\n")
    plan = plan_input(path, 0, 2, "text")
    assert len(read_part(plan.parts[0], "text")) == 2
    with pytest.raises(DataError, match=r"bad\.txt:3: not UTF-8"):
        read_part(plan.parts[1], "text")


def test_jsonl_strings_word_lists_blanks_and_errors(tmp_path):
    rows = [{"text": "The bank rose."}, {"text": ["pre", "split", "words"]}, {"text": None}]
    path = tmp_path / "docs.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n", encoding="utf-8")
    plan = plan_input(path, 0, 10, "text")
    got = read_all(plan)
    assert [s.words for _, s in got] == [("The", "bank", "rose", "."), ("pre", "split", "words")]
    assert [s.id for _, s in got] == ["docs.l1", "docs.l2"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "ok"}\n{"body": "no text field"}\n{not json\n', encoding="utf-8")
    parts = plan_input(bad, 0, 1, "text").parts
    assert read_part(parts[0], "text")[0][1].words == ("ok",)
    with pytest.raises(DataError, match=r"bad\.jsonl:2: not a JSON object with a 'text' field"):
        read_part(parts[1], "text")
    with pytest.raises(DataError, match=r"bad\.jsonl:3: not JSON"):
        read_part(parts[2], "text")
    words = tmp_path / "words.jsonl"
    words.write_text('{"text": ["a", 3]}\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"words\.jsonl:1: Word 1 .* not a string"):
        read_part(plan_input(words, 0, 1, "text").parts[0], "text")


def test_parquet_parts_across_row_groups(tmp_path):
    values = [f"row {i} text" if i % 7 else None for i in range(23)]
    path = tmp_path / "table.parquet"
    pq.write_table(pa.table({"id": list(range(23)), "body": values}), path, row_group_size=4)
    plan = plan_input(path, 1, shard_size=5, text_column="body")
    assert plan.n_items == 23 and len(plan.parts) == 5
    got = read_all(plan, "body")
    assert [item for item, _ in got] == [i for i in range(23) if i % 7]
    assert [" ".join(s.words) for _, s in got] == [v for v in values if v]
    assert got[0][1].id == "table.r1"
    with pytest.raises(DataError, match="no column 'text'"):
        plan_input(path, 0, 5, "text")
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1 this is not parquet")
    with pytest.raises(DataError, match=r"broken\.parquet: cannot read as Parquet"):
        plan_input(broken, 0, 5, "text")


def test_xml_parts_carry_the_sentences(semcor200):
    corpus = read_xml(semcor200)
    plan = plan_input(semcor200, 0, shard_size=64, text_column="text")
    assert [p.n_items for p in plan.parts] == [64, 64, 64, 8]
    assert plan.sha256 == corpus.sha256
    got = [s for _, s in read_all(plan)]
    assert got == list(corpus.sentences)  # words, lemmas, POS, instances and gold keys
    assert sentence_from_json(sentence_to_json(corpus.sentences[0])) == corpus.sentences[0]


def test_malformed_xml_names_file_and_line(tmp_path):
    path = tmp_path / "broken.data.xml"
    path.write_text(
        '<?xml version="1.0"?>\n<corpus>\n<text id="d0">\n<sentence id="d0.s0">\n'
        "<wf>ok</wf>\n<wf>unclosed\n</sentence>\n</text>\n</corpus>\n",
        encoding="utf-8",
    )
    with pytest.raises(DataError, match=r"broken\.data\.xml:7: malformed XML"):
        plan_input(path, 0, 10, "text")


def test_unreadable_compressed_file(tmp_path):
    path = tmp_path / "broken.txt.xz"
    path.write_bytes(b"\xfd7zXZ\x00 garbage, not an xz stream")
    with pytest.raises(DataError, match=r"broken\.txt\.xz: cannot read"):
        plan_input(path, 0, 10, "text")
