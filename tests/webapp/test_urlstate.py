"""Settings in the URL: values round-trip, a link's bad values are ignored with a note (no
traceback), the sidebar's settings come back, and a link to an upload asks for the file again."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.webapp.markdown import shown

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

from webapp.caches import corpora
from webapp.offered_models import NOT_OFFERED
from webapp.urlstate import NONE, Between, Param, decode, encode

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("value", "kind"),
    [("bank", "str"), (300, "int"), (0.25, "float"), (True, "bool"), (False, "bool"),
     (None, "optional"), ("NOUN", "optional")],
)  # fmt: skip
def test_values_round_trip(value, kind):
    assert decode(encode(value, kind), kind) == value
    assert encode(None, "optional") == NONE


def test_bad_text_is_refused_and_ranges_checked():
    for text, kind in (("x", "int"), ("nan", "float"), ("yes", "bool")):
        with pytest.raises(ValueError):
            decode(text, kind)
    assert 5 in Between(2, 100) and 101 not in Between(2, 100) and "5" not in Between(2, 100)
    assert encode("x" * 5000, "str") is None  # too long for a link: left out


def _page(page: str, query: dict):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=300)
    at.query_params.update(query)
    at.switch_page(f"webapp/pages/{page}.py").run()  # the link opens the page itself
    assert not at.exception, [e.value for e in at.exception]
    return at


def _senses(query: dict):
    return _page("senses", query)


@pytest.mark.slow
def test_a_link_restores_settings_and_ignores_bad_values():
    at = _senses({"source": "demo", "demo_word": "nosuch", "dims": "7", "method": "pca",
                  "seed": "12", "layers": "3", "layer": "99", "view": "every layer"})  # fmt: skip
    notes = " ".join(shown(w.value) for w in at.warning)
    assert "demo_word=nosuch" in notes and "dims=7" in notes
    assert at.selectbox(key="senses_demo_word").value == "bank"  # the default
    assert at.selectbox(key="senses_method").value == "pca"
    assert at.number_input(key="senses_seed").value == 12
    assert at.sidebar.selectbox(key="layers").value == "3"
    assert at.select_slider(key="senses_layer").value == "3"  # 99 is no layer: the sidebar's
    assert at.query_params["dims"] == "2" and at.query_params["seed"] == "12"


@pytest.mark.slow
@pytest.mark.parametrize("query", [{"system": "no-such-system"}, {"index": "system:gone"}])
def test_a_links_system_this_server_lacks_is_named_in_a_note(query):
    at = _page("wsd", {**query, "sentence": "He sat on the bank.", "word": "bank"})
    notes = " ".join(shown(w.value) for w in at.warning)
    name = next(iter(query.values())).removeprefix("system:")
    assert f"system={name}" in notes and "do not apply here" in notes, notes
    assert at.selectbox(key="wsd_system").value == "biencoder"  # the default, said so
    assert at.query_params["system"] == "biencoder"


@pytest.mark.slow
def test_a_link_to_an_upload_asks_for_the_file_again():
    at = _senses({"source": "upload", "upload": "banks.txt", "word": "bank"})
    assert any(
        "banks.txt" in shown(i.value) and "upload it again" in shown(i.value) for i in at.info
    )
    assert at.query_params["upload"] == "banks.txt" and at.query_params["source"] == "upload"


@pytest.mark.slow
@pytest.mark.parametrize(
    "query",
    [{"model": "/etc"}, {"model": "/no/such/dir"}, {"model": "x" * 20_000},
     {"compare": "1", "a_model": "/etc", "b_model": "../../../../etc"}],
)  # fmt: skip
def test_a_link_cannot_make_the_server_load_a_path(query):
    at = _senses({"source": "demo", **query})
    notes = [shown(w.value) for w in at.warning]
    assert NOT_OFFERED in notes, notes
    text = " ".join([*notes, *(e.value for e in at.error), *(e.value for e in at.sidebar.error)])
    assert "passwd" not in text and "not a directory" not in text and "x" * 100 not in text
    assert at.sidebar.text_input(key="model").value == ""  # the packaged model
    for pane in ("a", "b"):
        key = f"senses_{pane}_model"
        if key in at.session_state:
            assert at.session_state[key] != "/etc"


def test_uploads_have_an_explicit_size_limit():
    config = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text())
    assert 1 <= config["server"]["maxUploadSize"] <= 50  # megabytes
    assert config["client"]["toolbarMode"] == "minimal"  # no "Deploy" button


def test_an_older_links_reference_corpus_label_opens_the_corpus_by_its_name():
    """Links made before the app named reference corpora as the library does carry the label."""
    param = Param("geometry_corpus", "corpus", upgrade=corpora.reference_name)
    for name, label in corpora.REFERENCE_LABELS.items():
        assert param.link_text({"corpus": label}) == name
        assert param.link_text({"corpus": name}) == name
    assert param.link_text({"corpus": "elsewhere"}) == "elsewhere"  # refused by its choices
