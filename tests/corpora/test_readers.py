from __future__ import annotations

import lzma
import time
from collections import Counter

import pytest

from workbench.corpora.datasets import load_dataset
from workbench.corpora.parsing import MAX_XML_TOKEN_BYTES, read_gold_keys
from workbench.corpora.readers import corpus_from_texts, read_text, read_xml
from workbench.errors import DataError


def pos_counts(corpus) -> Counter:
    """Number of instances per universal POS tag."""
    return Counter(inst.pos for _, inst in corpus.instances())


XML = """<?xml version="1.0" encoding="UTF-8" ?>
<corpus lang="en" source="toy">
<text id="toy.d000">
<sentence id="toy.d000.s000">
<wf lemma="the" pos="DET">The</wf>
<instance id="toy.d000.s000.t000" lemma="meeting" pos="NOUN">meeting</instance>
<instance id="toy.d000.s000.t001" lemma="take_place" pos="VERB">took place</instance>
<wf lemma="of_this" pos="ADV">of this</wf>
<wf lemma="." pos=".">.</wf>
</sentence>
<sentence id="toy.d000.s001">
<instance id="toy.d000.s001.t000" lemma="bank" pos="NOUN">Banks</instance>
<wf lemma="&amp;" pos=".">&amp;</wf>
</sentence>
</text>
</corpus>
"""
GOLD = (
    "toy.d000.s000.t000 meeting%1:14:00::\n"
    "toy.d000.s000.t001 take_place%2:30:00:: take_place%2:30:01::\n"
    "toy.unknown.t999 foo%1:00:00::\n"
)


@pytest.fixture
def toy(tmp_path):
    (tmp_path / "toy.data.xml").write_text(XML, encoding="utf-8")
    (tmp_path / "toy.gold.key.txt").write_text(GOLD, encoding="utf-8")
    return tmp_path


def test_xml_reader_keeps_multiword_elements_whole(toy):
    corpus = read_xml(toy / "toy.data.xml")
    assert corpus.name == "toy"
    assert (corpus.n_sentences, corpus.n_tokens, corpus.n_instances) == (2, 7, 3)
    first = corpus.sentences[0]
    assert first.words == ("The", "meeting", "took place", "of this", ".")
    assert first.lemmas[2] == "take_place" and first.pos[3] == "ADV"
    inst = first.instances[1]
    assert (inst.id, inst.index, inst.lemma, inst.pos) == (
        "toy.d000.s000.t001",
        2,
        "take_place",
        "VERB",
    )
    assert inst.keys == ("take_place%2:30:00::", "take_place%2:30:01::")
    assert corpus.sentences[1].words == ("Banks", "&")


def test_missing_gold_gives_empty_keys_and_unknown_ids_are_counted(toy):
    corpus = read_xml(toy / "toy.data.xml")
    (banks,) = [i for _, i in corpus.instances() if i.id == "toy.d000.s001.t000"]
    assert banks.keys == ()
    assert corpus.n_unknown_gold == 1
    assert set(corpus.gold()) == {"toy.d000.s000.t000", "toy.d000.s000.t001"}
    assert pos_counts(corpus) == {"NOUN": 2, "VERB": 1}
    assert len(corpus.sha256) == 64


def test_a_gold_file_of_another_dataset_is_refused(toy, tmp_path):
    other = tmp_path / "other.gold.key.txt"
    other.write_text("x.d000.s000.t000 bank%1:14:00::\nx.d000.s000.t001 bank%1:17:01::\n")
    with pytest.raises(DataError, match="none of the 2 ids of the gold file .*'x.d000.s000.t000'"):
        read_xml(toy / "toy.data.xml", other)


def test_xz_files_read_the_same(toy, tmp_path):
    packed = tmp_path / "packed"
    packed.mkdir()
    with lzma.open(packed / "toy.data.xml.xz", "wt", encoding="utf-8") as fh:
        fh.write(XML)
    with lzma.open(packed / "toy.gold.key.txt.xz", "wt", encoding="utf-8") as fh:
        fh.write(GOLD)
    plain, xz = read_xml(toy / "toy.data.xml"), read_xml(packed / "toy.data.xml.xz")
    assert xz.name == "toy"
    assert xz.sentences == plain.sentences


def test_malformed_xml_names_file_and_line(tmp_path):
    bad = tmp_path / "bad.data.xml"
    lines = XML.splitlines()
    lines[6] = '<instance id="x" lemma="take_place" pos="VERB">took place</wf>'  # line 7
    bad.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(DataError, match=r"bad\.data\.xml:7: malformed XML"):
        read_xml(bad)


def test_instance_without_attributes_names_the_line(tmp_path):
    bad = tmp_path / "noid.data.xml"
    bad.write_text(XML.replace(' id="toy.d000.s001.t000"', ""), encoding="utf-8")
    with pytest.raises(DataError, match=r"noid\.data\.xml:12: <instance> without"):
        read_xml(bad)


def test_truncated_xz_is_a_data_error(tmp_path):
    path = tmp_path / "cut.data.xml.xz"
    path.write_bytes(lzma.compress(XML.encode())[:60])
    with pytest.raises(DataError, match="cut.data.xml.xz"):
        read_xml(path)


def test_missing_file_is_a_data_error(tmp_path):
    with pytest.raises(DataError, match="not found"):
        read_xml(tmp_path / "absent.data.xml")


def test_gold_keys_merge_repeated_ids(tmp_path):
    path = tmp_path / "g.txt"
    path.write_text("a k1 k2\n\na k2 k3\nb\n")
    assert read_gold_keys(path) == {"a": ("k1", "k2", "k3"), "b": ()}


def test_plain_text_keeps_line_numbers(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("The bank raised rates.\n\n   \nWe sat on the state-of-the-art bank\n")
    corpus = read_text(path)
    assert [s.id for s in corpus] == ["notes.l1", "notes.l4"]
    assert corpus.sentences[0].words == ("The", "bank", "raised", "rates", ".")
    assert corpus.sentences[1].words[-2] == "state-of-the-art"
    assert corpus.sentences[0].lemmas[0] == "the"
    assert corpus.n_skipped == 2 and corpus.n_instances == 0
    in_memory = corpus_from_texts(["a b", "", "c"])
    assert [s.id for s in in_memory] == ["texts.l1", "texts.l3"]


def test_unknown_dataset_name(wsd_data):
    with pytest.raises(DataError, match="unknown dataset"):
        load_dataset("senseval9", wsd_data)


# Counts from shared/data/wsd/README.md (instances equal the published ones).
EXPECTED = {
    "senseval2": (242, 5766, 2282, 2389, {"NOUN": 1066, "VERB": 517, "ADJ": 445, "ADV": 254}),
    "senseval3": (352, 5541, 1850, 1888, {"NOUN": 900, "VERB": 588, "ADJ": 350, "ADV": 12}),
    "semeval2007": (135, 3201, 455, 459, {"NOUN": 159, "VERB": 296}),
    "semeval2013": (306, 8391, 1644, 1656, {"NOUN": 1644}),
    "semeval2015": (138, 2604, 1022, 1219, {"NOUN": 531, "VERB": 251, "ADJ": 160, "ADV": 80}),
    "ALL": (1173, 25503, 7253, 7611, {"NOUN": 4300, "VERB": 1652, "ADJ": 955, "ADV": 346}),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_evaluation_set_counts(wsd_data, name):
    corpus = load_dataset(name, wsd_data)
    sentences, tokens, instances, keys, pos = EXPECTED[name]
    assert (corpus.n_sentences, corpus.n_tokens, corpus.n_instances) == (
        sentences,
        tokens,
        instances,
    )
    assert corpus.n_gold_keys() == keys
    assert pos_counts(corpus) == pos
    assert corpus.n_unknown_gold == 0
    assert all(inst.keys for _, inst in corpus.instances())


@pytest.mark.slow
def test_semcor_counts(wsd_data):
    start = time.perf_counter()
    corpus = load_dataset("semcor", wsd_data)
    elapsed = time.perf_counter() - start
    assert (corpus.n_sentences, corpus.n_instances) == (37_176, 226_036)
    assert corpus.n_tokens == 778_587
    assert corpus.n_gold_keys() == 226_695
    assert pos_counts(corpus) == {"NOUN": 87_002, "VERB": 88_334, "ADJ": 31_753, "ADV": 18_947}
    assert sum(" " in s.words[i.index] for s, i in corpus.instances()) == 15_294
    assert len({k for _, i in corpus.instances() for k in i.keys}) == 33_362
    print(f"SemCor loaded in {elapsed:.2f} s")


def test_load_dataset_is_memoised_until_the_file_changes(tmp_path):
    base = tmp_path / "WSD_Evaluation_Framework" / "Evaluation_Datasets" / "senseval2"
    base.mkdir(parents=True)
    xml = base / "senseval2.data.xml"
    xml.write_text(XML, encoding="utf-8")
    (base / "senseval2.gold.key.txt").write_text(GOLD, encoding="utf-8")
    first = load_dataset("senseval2", tmp_path)
    assert load_dataset("SENSEVAL2", tmp_path) is first
    xml.write_text(XML.replace("meeting</instance>", "meetings</instance>"), encoding="utf-8")
    again = load_dataset("senseval2", tmp_path)
    assert again is not first and again.sentences[0].words[1] == "meetings"
    assert again.sha256 != first.sha256


@pytest.mark.parametrize(
    "where",
    ["attribute", "text", "id", "between", "xz"],
)
def test_oversized_tags_are_refused_before_parsing(tmp_path, where):
    """A 2 MB attribute or text took expat 2.5 s (30 MB: hours); refused at once, with the
    line, wherever it is (a chunk boundary falls inside it)."""
    big = "a" * (2 << 20)
    token = {
        "attribute": f'<wf lemma="{big}" pos="NOUN">x</wf>',
        "text": f'<wf lemma="x" pos="NOUN">{big}</wf>',
        "id": f'<instance id="{big}" lemma="x" pos="NOUN">x</instance>',
        "between": f'<wf lemma="x" pos="NOUN">x</wf>{" " * (2 << 20)}',
        "xz": f'<wf lemma="{big}" pos="NOUN">x</wf>',
    }[where]
    text = f'<corpus>\n<text id="d">\n<sentence id="s">\n{token}\n</sentence>\n</text>\n</corpus>\n'
    path = tmp_path / "big.data.xml"
    if where == "xz":
        path = tmp_path / "big.data.xml.xz"
        with lzma.open(path, "wt", encoding="utf-8") as fh:
            fh.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    with pytest.raises(DataError, match=r"big\.data\.xml(\.xz)?:4: more than 64 KiB") as info:
        read_xml(path)
    assert "refused" in str(info.value) and MAX_XML_TOKEN_BYTES == 64 << 10


def test_tags_up_to_the_limit_are_read(tmp_path):
    lemma = "b" * (MAX_XML_TOKEN_BYTES - 100)
    filler = "".join(f'<wf lemma="w{i}" pos="X">w{i}</wf>\n' for i in range(3000))  # > 1 chunk
    path = tmp_path / "ok.data.xml"
    path.write_text(
        f'<corpus><text id="d"><sentence id="s">{filler}<wf lemma="{lemma}" pos="NOUN">x</wf>'
        "</sentence></text></corpus>",
        encoding="utf-8",
    )
    corpus = read_xml(path)
    assert corpus.sentences[0].lemmas[-1] == lemma and len(corpus.sentences[0]) == 3001
