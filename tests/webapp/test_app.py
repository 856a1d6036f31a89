"""Every page of the app under Streamlit's AppTest: renders without exception, its main widgets
exist, a typical interaction produces its chart, bad input gives a message (no traceback)."""

from __future__ import annotations

import ast
import base64
import json
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import workbench.encoding.cache
import workbench.viz.projection
from tests.webapp.markdown import shown, table_rows
from webapp.offered_models import NOT_OFFERED
from workbench.errors import InputError

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 240  # the first UMAP of a process compiles numba code

pytestmark = pytest.mark.slow


def _app():
    from streamlit.testing.v1 import AppTest

    return AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT)


def _ok(at) -> None:
    assert not at.exception, [e.value for e in at.exception]


def _figure(at, i: int = 0) -> dict:
    return json.loads(at.get("plotly_chart")[i].proto.spec)


def _neighbours(at) -> list[dict[str, str]]:
    """The rows of Explore's neighbour table (a markdown table: rank, word, cosine, ...)."""
    tables = [table_rows(m.value) for m in at.markdown]
    return next((rows for rows in tables if rows and "cosine" in rows[0]), [])


def _array(value) -> np.ndarray:
    """A plotly JSON array: a list, or a typed array ``{"dtype", "bdata", "shape"}``."""
    if isinstance(value, dict) and "bdata" in value:
        data = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        shape = value.get("shape")
        return data.reshape([int(n) for n in str(shape).split(",")]) if shape else data
    return np.asarray(value)


def listed_pages() -> list[dict]:
    """The ``st.Page`` calls of app.py's ``pages()``, in order, as written: ``path`` and the
    keywords (``title``, ``icon``, ``default``)."""
    tree = ast.parse((REPO / "app.py").read_text(encoding="utf-8"))
    func = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "pages")
    listed = next(n.value for n in ast.walk(func) if isinstance(n, ast.Return))
    assert isinstance(listed, ast.List)
    return [
        {"path": ast.literal_eval(call.args[0]),
         **{k.arg: ast.literal_eval(k.value) for k in call.keywords}}
        for call in listed.elts
        if isinstance(call, ast.Call) and ast.unparse(call.func) == "st.Page"
    ]  # fmt: skip


def test_every_page_file_is_listed_once_in_order():
    listed = listed_pages()
    paths = [p["path"] for p in listed]
    files = (REPO / "webapp" / "pages").glob("*.py")
    assert sorted(paths) == sorted(f"webapp/pages/{f.name}" for f in files if f.stem[0] != "_")
    assert len(set(paths)) == len(paths) and all((REPO / p).is_file() for p in paths)
    titles = ["Explore", "Geometry", "Senses", "Corpus map", "WSD", "Fine-tune"]
    assert [p["title"] for p in listed] == titles
    assert [p.get("default", False) for p in listed] == [True] + [False] * (len(listed) - 1)
    assert all(p["icon"].startswith(":material/") for p in listed)
    for page in listed:  # each file's docstring starts with its title
        doc = ast.get_docstring(ast.parse((REPO / page["path"]).read_text(encoding="utf-8")))
        assert doc and doc.splitlines()[0].rstrip(".") == page["title"], page["path"]


def test_the_server_imports_no_torch_before_it_answers():
    """What Streamlit's server imports to find the ``st.App`` (app.py and the start-up code)
    leaves torch and the library's encoder to the preload thread, so the health check answers
    without waiting on them."""
    heavy = ("torch", "workbench.encoding.encoder", "webapp.preload")
    code = f"import sys, app; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, timeout=120, check=True)  # fmt: skip
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


def test_the_preloaded_model_and_wsd_system_import_no_torch(default_encoder):
    """The preload's model and WSD system answer on ONNX Runtime once their exports exist:
    the server holds no torch until a page trains."""
    steps = ("the packaged model", "the WSD bi-encoder")
    code = (
        "import sys, webapp.preload as p\n"
        f"[work() for name, work in p.STEPS if name in {steps!r}]\n"
        "print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))"
    )
    for _ in range(2):  # the first run makes the exports it lacks; the second finds them
        done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                              text=True, timeout=300, check=True)  # fmt: skip
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout + done.stderr[-2000:]


def test_explore_renders_and_a_word_gives_its_heatmap():
    at = _app().run()
    _ok(at)
    assert at.title[0].value.startswith("Explore")
    assert at.sidebar.text_input(key="model") and at.sidebar.selectbox(key="layers")
    assert at.get("plotly_chart"), "no heatmap on first render"
    at.text_area(key="explore_text").set_value(
        "The cell divided twice.\nHe was locked in a cell.\nMy cell phone died.\nA red apple."
    ).run()
    _ok(at)
    at.pills[0].set_value("cell").run()
    _ok(at)
    fig = _figure(at)
    heat = [t for t in fig["data"] if t["type"] == "heatmap"]
    assert len(heat) == 2  # raw and corrected, side by side
    z = _array(heat[0]["z"])
    assert z.shape == (3, 7)  # 3 occurrences x 7 hidden states
    np.testing.assert_allclose(z[0], 1.0, atol=1e-5)  # the query itself
    words = [row["word"] for row in _neighbours(at)]
    assert len(words) == 10, "no neighbour table"
    assert any("cell" in h.value for h in at.subheader)


def test_explore_word_pills_show_a_words_markup_as_text():
    """Streamlit renders a pill's label as Markdown: a word's ``__emphasis__`` stays text."""
    at = _app().run()
    at.text_area(key="explore_text").set_value("the __emph__ word.\nan __emph__ cell.").run()
    _ok(at)
    labels = list(at.pills[0].options)
    assert "\\_\\_emph\\_\\_ ×2" in labels, labels  # escaped: shown as typed
    assert "__emph__ ×2" in [shown(label) for label in labels]
    at.pills[0].set_value("__emph__").run()  # the word itself is the value
    _ok(at)
    assert at.pills[0].value == "__emph__" and at.get("plotly_chart")


@pytest.mark.parametrize("text", ["A cat sat quietly.", "cat"])
def test_explore_text_where_no_word_repeats_explains_itself(text):
    at = _app().run()
    at.text_area(key="explore_text").set_value(text).run()
    _ok(at)
    assert not at.error, [e.value for e in at.error]  # not "need at least two vectors"
    assert any("occurs only once in your text" in i.value for i in at.info)
    assert not at.get("plotly_chart")  # no heatmap of one occurrence ...
    assert _neighbours(at)  # ... but its neighbours


def test_explore_heatmap_colour_scale_fits_the_data():
    at = _app().run()
    heat = [t for t in _figure(at)["data"] if t["type"] == "heatmap"]
    low = min(_array(t["z"]).min() for t in heat)
    assert heat[0]["zmin"] == pytest.approx(np.floor(low * 10) / 10) and heat[0]["zmax"] == 1
    at.toggle(key="explore_fit_scale").set_value(False).run()
    heat = [t for t in _figure(at)["data"] if t["type"] == "heatmap"]
    assert (heat[0]["zmin"], heat[0]["zmax"]) == (-1, 1)


def test_explore_empty_text_shows_a_message():
    at = _app().run()
    at.text_area(key="explore_text").set_value("   ").run()
    _ok(at)
    assert any("empty" in shown(e.value) for e in at.error)
    assert not at.get("plotly_chart")


def test_a_model_the_server_does_not_offer_is_a_message_in_the_sidebar_and_the_page():
    at = _app().run()
    at.sidebar.text_input(key="model").set_value("./no/such/model-dir").run()
    _ok(at)
    assert any(NOT_OFFERED in shown(e.value) for e in at.sidebar.error)
    assert any(NOT_OFFERED in shown(e.value) for e in at.main.error)  # the page says so too
    assert at.get("plotly_chart"), "the page goes on with the packaged model"
    at.sidebar.text_input(key="model").set_value("").run()
    _ok(at)
    assert not at.sidebar.error


def test_senses_renders_umap_and_switches_views():
    at = _app().run()
    at.switch_page("webapp/pages/senses.py").run()
    _ok(at)
    assert at.title[0].value == "Sense clusters"
    assert at.selectbox(key="senses_source").value == "demo"
    fig = _figure(at)
    names = [t["name"] for t in fig["data"]]
    assert names[-1] == "sense centroid" and len(names) == 5  # bank: 4 senses + centroids
    assert sum(len(_array(t["x"])) for t in fig["data"][:-1]) == 34
    assert "<b>[bank]</b>" in fig["data"][0]["text"][0]  # hover: the sentence, word marked

    at.selectbox(key="senses_demo_word").set_value("die").run()
    at.selectbox(key="senses_method").set_value("pca").run()
    at.radio(key="senses_dims").set_value(3).run()
    _ok(at)
    assert {t["type"] for t in _figure(at)["data"]} == {"scatter3d"}

    at.segmented_control(key="senses_view").set_value("every layer").run()
    _ok(at)
    titles = [a["text"] for a in _figure(at)["layout"]["annotations"]]
    assert titles == [f"layer {i}" for i in range(7)]
    keys = {b.key for b in at.get("download_button")}  # the figure's and the numbers' formats
    assert {"senses_fig_html", "senses_table_csv", "senses_table_json"} <= keys


def test_senses_predicted_colours_and_export():
    at = _app().run()
    at.switch_page("webapp/pages/senses.py").run()
    at.segmented_control(key="senses_colour").set_value("predicted").run()
    _ok(at)
    assert any(shown(c.value).startswith("Predicted:") for c in at.caption)
    assert _figure(at)["data"]


def test_senses_rerun_after_unrelated_change_recomputes_nothing(monkeypatch):
    at = _app().run()
    at.switch_page("webapp/pages/senses.py").run()
    at.select_slider(key="senses_layer").set_value("3").run()
    calls = {"encode": 0, "fit": 0}
    real_encode, real_fit = (
        workbench.encoding.cache.encode_cached,
        workbench.viz.projection.Projector.fit,
    )

    def ours() -> bool:  # not a background build an earlier test left running (a corpus map)
        return not threading.current_thread().name.startswith("workbench-")

    def encode(*args, **kwargs):
        calls["encode"] += ours()
        return real_encode(*args, **kwargs)

    def fit(self, x):
        calls["fit"] += ours()
        return real_fit(self, x)

    monkeypatch.setattr(workbench.encoding.cache, "encode_cached", encode)
    monkeypatch.setattr(workbench.viz.projection.Projector, "fit", fit)
    at.select_slider(key="senses_layer").set_value("last4-sum").run()  # seen before
    at.select_slider(key="senses_layer").set_value("3").run()
    at.selectbox(key="senses_demo_word").set_value("bank").run()  # same word again
    _ok(at)
    assert calls == {"encode": 0, "fit": 0}
    at.select_slider(key="senses_layer").set_value("2").run()  # new input: one projection
    assert calls == {"encode": 0, "fit": 1}


def test_senses_sources_give_messages_not_tracebacks():
    at = _app().run()
    at.switch_page("webapp/pages/senses.py").run()
    at.selectbox(key="senses_source").set_value("wordnet").run()
    at.text_input(key="senses_lemma").set_value("xyzzyq").run()
    _ok(at)
    assert any("no usage example" in shown(e.value) for e in at.error)
    at.selectbox(key="senses_source").set_value("upload").run()
    _ok(at)
    assert at.info and not at.get("plotly_chart")  # asks for a file


def test_semcor_without_the_lemma_is_a_message(wsd_data):
    at = _app().run()
    at.switch_page("webapp/pages/senses.py").run()
    at.selectbox(key="senses_source").set_value("semcor").run()
    at.text_input(key="senses_lemma").set_value("xyzzyq").run()
    _ok(at)
    assert any("no annotated occurrence of 'xyzzyq'" in shown(e.value) for e in at.error)


def test_upload_that_is_not_text_is_refused():
    from webapp.caches import corpora

    with pytest.raises(InputError, match="not a text file"):
        corpora.occurrences.__wrapped__("upload", "bank", upload=b"\x00\x01\x02", upload_name="x")
    found = corpora.occurrences.__wrapped__(
        "upload", "bank", upload=b"The bank.\nNo.\nBanks!", upload_name="t.txt"
    )
    assert [o.source for o in found] == ["t.txt:1", "t.txt:3"]


def test_an_upload_s_occurrences_keep_the_chosen_pos():
    from webapp.caches import corpora

    text = b"I bank at the bank.\nThey will bank on it.\nThe river bank flooded."
    verbs = corpora.occurrences.__wrapped__("upload", "bank", "VERB", None, text, "t.txt")
    assert [(o.source, o.index) for o in verbs] == [("t.txt:1", 1), ("t.txt:2", 2)]
    with pytest.raises(InputError, match="no occurrence of 'bank' tagged ADV"):
        corpora.occurrences.__wrapped__("upload", "bank", "ADV", None, text, "t.txt")


def test_geometry_renders_the_anisotropy_figure_and_switches_correction():
    at = _app().run()
    at.switch_page("webapp/pages/geometry.py").run()
    _ok(at)
    assert at.title[0].value.startswith("Geometry")
    charts = at.get("plotly_chart")
    assert len(charts) == 3
    lines = _figure(at, 0)["data"]
    assert [t["name"] for t in lines] == [
        "raw", "centered", "standardized", "all-but-the-top", "whitened",
    ]  # fmt: skip
    raw = _array(lines[0]["y"])
    zscore = _array(lines[2]["y"])
    assert (raw > zscore).all() and raw.max() > 0.05  # the correction removes anisotropy
    assert at.table[0].value.shape[0] == 7  # one row per hidden state, every column shown
    at.segmented_control(key="geometry_correction").set_value("whiten").run()
    _ok(at)
    assert "whitened" in _figure(at, 1)["layout"]["title"]["text"]
    visible = [t["name"] for t in _figure(at, 2)["data"] if t.get("visible") is True]
    assert visible == ["raw", "whitened"]


def test_wsd_one_sentence_bar_chart_and_bad_input(best_wsd_index):
    at = _app().run()
    at.switch_page("webapp/pages/wsd.py").run()
    _ok(at)
    assert at.selectbox(key="wsd_system").value == "biencoder"  # the default
    # the caption says how the score was made, the shipped model's smoothing included
    assert any("0.25 times the mean of its WordNet neighbours'" in shown(c.value)
               for c in at.caption)  # fmt: skip
    at.selectbox(key="wsd_system").set_value("best").run()  # the centroids, explained
    _ok(at)
    # bars: the answer's, the other candidates' (and any set aside); a marker beside the answer
    bars = [t for t in _figure(at)["data"] if t["type"] == "bar"]
    assert sum(len(_array(t["x"])) for t in bars) >= 10  # the senses of "bank"
    assert at.success and "bank%" in shown(at.success[0].value)
    assert "score from: centroid of" in shown(at.success[0].value)
    assert any("best system, trained on semcor" in shown(c.value) for c in at.caption)
    at.text_input(key="wsd_text").set_value("He caught a bass in the lake.").run()
    at.text_input(key="wsd_word").set_value("bass").run()
    at.selectbox(key="wsd_pos").set_value("NOUN").run()  # a traceback once
    _ok(at)
    assert "bass%1:" in shown(at.success[0].value)  # a noun sense
    assert any("only once in semcor" in shown(w.value) for w in at.warning)  # it rests on 1
    at.text_input(key="wsd_word").set_value("money").run()
    _ok(at)
    assert any("not a word of the sentence" in shown(e.value) for e in at.error)
    at.text_input(key="wsd_text").set_value("").run()
    _ok(at)
    assert at.error


def test_wsd_wordnet_system_says_it_loses_to_the_first_sense():
    at = _app().run()
    at.switch_page("webapp/pages/wsd.py").run()
    at.selectbox(key="wsd_system").set_value("wordnet").run()
    at.text_input(key="wsd_text").set_value("The balloon was filled with helium").run()
    at.text_input(key="wsd_word").set_value("helium").run()
    _ok(at)
    assert "helium%1:27:00::" in shown(at.success[0].value)
    assert any("below WordNet's first sense" in shown(w.value) for w in at.warning)
    assert any("WordNet's first sense" in i.value for i in at.info)  # the back-off, visible


def test_a_word_that_occurs_twice_asks_which_and_the_link_carries_it():
    """A report's error link names the word's occurrence; the page asks which one, and the
    two occurrences are two different questions (two answers: a financial institution, the
    river's sloping land)."""
    at = _app()
    sentence = "The bank on Main Street lent money to farmers on the bank of the river"
    at.query_params.update({"sentence": sentence, "word": "bank", "occurrence": "2"})
    at.switch_page("webapp/pages/wsd.py").run()
    _ok(at)
    which = at.number_input(key="wsd_occurrence")
    assert which.value == 2 and which.max == 2
    second = at.success[0].value
    which.set_value(1).run()
    _ok(at)
    assert at.success[0].value != second
    assert at.query_params["occurrence"] == ["1"] or at.query_params["occurrence"] == "1"


def test_wsd_evaluation_on_a_few_sentences(wsd_data):
    at = _app().run()
    at.switch_page("webapp/pages/wsd.py").run()
    at.number_input(key="wsd_n_sentences").set_value(8).run()
    assert any("Run the evaluation" in i.value for i in at.info)
    at.button(key="wsd_run").click().run()
    _ok(at)
    summary = at.dataframe[0].value  # the candidates above are a table: the report's first
    assert summary["system"].tolist() == ["this system", "WordNet 1st sense", "SemCor MFS"]
    f1, low, high = (summary[c].iloc[0] for c in ("F1", "95% low", "95% high"))
    assert 0 <= low <= f1 <= high <= 100
    folded = {e.label for e in at.expander}
    assert {"Most frequent and less frequent senses", "Number of candidate senses"} <= folded
    errors = [m.value for m in at.markdown if "Open this sentence in the WSD page" in m.value]
    assert errors and all("/wsd?sentence=" in e for e in errors)


def test_the_models_facts_are_in_the_sidebar_when_a_page_stops_early():
    """A page that ends its run with st.stop (Explore side by side, an error message) still
    shows the loaded model's facts below the sidebar's settings."""
    at = _app().run()
    _ok(at)
    facts = [m.value for m in at.sidebar.markdown if "layers ·" in m.value]
    assert facts and "384 dims" in facts[0]
    at.toggle(key="explore_compare").set_value(True).run()
    _ok(at)
    assert [m.value for m in at.sidebar.markdown if "layers ·" in m.value] == facts
