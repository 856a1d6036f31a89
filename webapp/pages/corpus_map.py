"""Corpus map.

Every word occurrence of a corpus at one layer and correction, in one map: coloured by POS,
supersense or sense where the corpus knows them, searchable by word; select points (click, box
or lasso) to read their sentences beside the map.
"""

from __future__ import annotations

import importlib.util

import streamlit as st

import webapp.builds
import webapp.downloads
import webapp.feedback
import webapp.layout
import webapp.loaded_model
import webapp.settings
import webapp.sidebar
import webapp.urlstate
from webapp.caches import corpora, figures, indexes
from webapp.kept_chart import kept_chart
from webapp.panes import OFFERED_CORRECTIONS
from webapp.text import plain
from webapp.urlstate import Between, Param
from workbench.errors import WorkbenchError
from workbench.geometry.corrections import CORRECTION_LABELS
from workbench.viz.corpus_figures import COLOURS, corpus_figure
from workbench.viz.corpus_map import CorpusMapConfig
from workbench.viz.plotting import selected_rows
from workbench.viz.projection import ProjectionConfig
from workbench.viz.selection import select_rows

#: Plotly draws every map (offline); Embedding Atlas (an optional extra) draws one when chosen: its
#: Streamlit component loads its database engine (duckdb-wasm) from cdn.jsdelivr.net, so without
#: internet it draws nothing (docs/benchmarks.md, "The corpus map").
RENDERERS = ("plotly", "Embedding Atlas")
PARAMS = (
    *webapp.sidebar.SIDEBAR_PARAMS,
    Param("map_source", "source", choices=tuple(corpora.MAP_SOURCES)),
    Param("map_sentences", "sentences", "int", choices=Between(0, 10_000_000)),
    Param("map_layer", "layer"),
    Param("map_correction", "correction", choices=OFFERED_CORRECTIONS),
    Param("map_colour", "colour", choices=COLOURS),
    Param("map_search", "search"),
    Param("map_renderer", "renderer", choices=RENDERERS),
)

share = webapp.layout.header(
    "A map of a whole corpus",
    "Each point is one word occurrence of the corpus, its vector at the chosen layer projected "
    "to 2-D (UMAP; past 20,000 words UMAP maps a seeded sample and every other word is placed "
    "among its nearest sampled neighbours). The map is made once per model, layer and "
    "correction, and stored.",
)  # the "copy link" control, filled once every widget is drawn
webapp.urlstate.restore(PARAMS)

sources = [s for s in corpora.MAP_SOURCES
           if s != "semcor" or "semcor" in corpora.available_datasets()]  # fmt: skip
c1, c2, c3, c4 = st.columns([3, 2, 2, 2], vertical_alignment="bottom")
# the second row (search, colour, renderer) is drawn before the map is built: a rebuild keeps it
s1, s2, s3 = st.columns([3, 2, 2], vertical_alignment="bottom")
source = c1.selectbox("Corpus", sources, format_func=corpora.MAP_SOURCES.get,
                      key="map_source")  # fmt: skip
# the default through Session State only (a link's value is restored there): SemCor's first
# 2,000 sentences, every sentence of the others; a change of corpus takes the new corpus's
# default unless the visitor chose another number
SENTENCES_DEFAULT = {"semcor": 2000}
before = st.session_state.get("_map_sentences_for")
if "map_sentences" not in st.session_state or (
    before not in (None, source)
    and st.session_state["map_sentences"] == SENTENCES_DEFAULT.get(before, 0)
):
    st.session_state["map_sentences"] = SENTENCES_DEFAULT.get(source, 0)
st.session_state["_map_sentences_for"] = source
n_sentences = int(c2.number_input(
    "First sentences (0 = all)", 0, 10_000_000, step=500, key="map_sentences",
    help="SemCor has 37,176 sentences (778,587 words): 0 maps all of it (tens of minutes the "
    "first time on a CPU, stored after that).",
))  # fmt: skip
settings = webapp.settings.current()
enc = webapp.loaded_model.encoder()
layers = webapp.settings.layer_options(enc.n_layers)
st.session_state.setdefault("map_layer", str(enc.n_layers))
if st.session_state.get("map_layer") not in layers:
    st.session_state["map_layer"] = str(enc.n_layers)
layer = c3.selectbox("Layer", layers, key="map_layer")
correction = c4.selectbox("Correction", OFFERED_CORRECTIONS, format_func=CORRECTION_LABELS.get,
                          key="map_correction")  # fmt: skip

upload, upload_name = None, "upload"
if source == "upload":
    file = st.file_uploader("A text file, one sentence per line", key="map_upload")
    if file is None:
        webapp.urlstate.ask_for_upload(PARAMS, "map", "Upload a text file to map its words.")
    upload, upload_name = file.getvalue(), file.name

search = s1.text_input("Search a word or lemma", key="map_search", max_chars=100,
                       placeholder="e.g. bank").strip()  # fmt: skip
for kept in ("map_colour", "map_renderer"):  # drawn once the map is there: kept meanwhile
    if kept in st.session_state:
        st.session_state[kept] = st.session_state[kept]


def share_link() -> None:
    """The "copy link" control, at the top of the page (also while the map is being made)."""
    webapp.urlstate.link_control(
        PARAMS, {"upload": upload_name} if source == "upload" else None,
        f"the map of {corpora.MAP_SOURCES[source]} at layer {layer}",
        [f"the uploaded file {upload_name}"] if source == "upload" else [], area=share,
    )  # fmt: skip


config = CorpusMapConfig(layer=layer, correction=correction, max_sentences=n_sentences)
with (
    webapp.feedback.user_errors(),
    webapp.feedback.waiting(f"Reading {corpora.MAP_SOURCES[source]} and loading its map…"),
):
    build = webapp.builds.settle(
        figures.corpus_map_build(source, config, upload, upload_name), seconds=5
    )
webapp.builds.show_progress(build, share_link)
if build.error is not None:
    with webapp.feedback.user_errors():
        raise build.error
cmap = build.result

tagged = bool((cmap.table["pos"] != "").any())
if st.session_state.get("map_colour") not in COLOURS:
    st.session_state["map_colour"] = "pos" if tagged else "lemma"
colour = s2.selectbox(
    "Colour by", COLOURS, key="map_colour",
    help="POS: the tagger's. Supersense and sense: SemCor's gold labels; for any other text, "
    "the senses the WSD bi-encoder predicts (the legend says “predicted”).",
)  # fmt: skip
has_atlas = importlib.util.find_spec("embedding_atlas") is not None
renderer = s3.selectbox(
    "Drawn by", RENDERERS, key="map_renderer",
    help="plotly: offline, every point up to 200,000 (a seeded sample past that, the search's "
    "hits always). Embedding Atlas (WebGPU/WebGL, every point; `pip install "
    "'embedding-workbench[atlas]'`): the browser must reach cdn.jsdelivr.net, where its component "
    "loads its database engine from.",
)  # fmt: skip
use_atlas = renderer == "Embedding Atlas"
if use_atlas and not has_atlas:
    st.info("Embedding Atlas is not installed here: `pip install 'embedding-workbench[atlas]'`. "
            "Plotly draws this map meanwhile.", icon=":material/info:")  # fmt: skip
    use_atlas = False
elif use_atlas:
    st.caption("Embedding Atlas loads its database engine from cdn.jsdelivr.net: without "
               "internet in this browser the map stays empty; choose plotly.")  # fmt: skip

legend, predicted_caption = "", ""
if colour in ("sense", "supersense") and not (cmap.table[colour] != "").any():
    # plain text: no gold senses, so the WSD bi-encoder's predicted ones (computed once per text)
    bi = indexes.biencoder(settings)
    if bi is None:
        st.info(
            f"These texts carry no gold senses, and {plain(settings.model or 'this model')} has "
            "no WSD bi-encoder to predict them (the packaged model has one): every word is grey. "
            "Choose the packaged model in the sidebar, or SemCor as the corpus.",
            icon=":material/info:",
        )
    else:
        with webapp.feedback.user_errors():
            senses = webapp.builds.settle(indexes.text_senses_build(bi, cmap), seconds=2)
        webapp.builds.show_progress(senses, share_link)
        if senses.error is not None:
            with webapp.feedback.user_errors():
                raise senses.error
        labels = senses.result
        cmap = cmap.with_senses(labels.senses, labels.supersenses)
        legend = f"predicted {colour}"
        predicted_caption = (
            f"{colour.capitalize()}s predicted by the WSD bi-encoder ({plain(bi.name)}: each "
            f"content word's context vector against the glosses of its WordNet senses, of the "
            f"POS the tagger gave it) for {labels.n_labelled:,} of {len(cmap):,} words; the "
            "others (function words, words WordNet lacks) are “(none)”. No gold senses: these "
            "are the model's guesses."
        )
found = cmap.search(search) if search else []
method = cmap.info.get("method", "")
map_caption = (
    f"{len(cmap):,} words of {plain(cmap.info.get('corpus'))} ({cmap.info.get('n_sentences', 0):,} "
    f"sentences), {plain(cmap.info.get('model'))}, layer {layer}, {CORRECTION_LABELS[correction]}; "
    f"{method}" + (f"; made in {cmap.seconds:.0f} s" if cmap.seconds else "; loaded")
    + (f". “{plain(search)}”: {len(found):,} occurrences, ringed" if search else ".")
)  # fmt: skip

data = {"source": source, "corpus": cmap.info.get("corpus"), "sentences": n_sentences,
        "n_words": len(cmap), "colour": colour, "search": search, "method": method}  # fmt: skip
shown = webapp.downloads.view_settings(
    "corpus-map",
    layer,
    correction,
    f"{cmap.info.get('corpus')} (a seeded sample)",
    data,
    ProjectionConfig(random_state=config.seed),
)
rows: list[int] = []
if use_atlas:
    from embedding_atlas.streamlit import embedding_atlas

    frame = cmap.table.assign(text=cmap.texts())
    value = embedding_atlas(frame, x="x", y="y", text="text", key="map_atlas") or {}
    predicate = value.get("predicate")
    if predicate:
        try:  # one condition on the table's columns, parsed and run with a time limit
            rows = select_rows(frame, str(predicate))
        except WorkbenchError as exc:
            st.warning(f"The map's selection could not be read ({plain(exc)}).",
                       icon=":material/warning:")  # fmt: skip
else:
    fig = corpus_figure(cmap, colour, found, legend=legend,
                        title=f"{cmap.info.get('corpus')}, layer {layer}")  # fmt: skip
    event = kept_chart(fig, "map_chart", config=webapp.downloads.CHART_CONFIG, select=True)
    rows = selected_rows(event)
st.caption(map_caption)
if predicted_caption:
    st.caption(predicted_caption)

# ------------------------------------------------------------------ the selection's sentences
picked_rows = rows or [int(r) for r in found[:200]]
what = "selected" if rows else ("found" if search else "")
if picked_rows:
    st.subheader(f"{len(rows or found):,} {what} word{'s' * (len(rows or found) != 1)}")
    table = cmap.table.iloc[picked_rows[:500]][["word", "lemma", "pos", "sense", "supersense"]]
    table = table.assign(sentence=[cmap.context(i) for i in picked_rows[:500]])
    wide = {"sentence": st.column_config.TextColumn(width="large")}
    st.dataframe(table, hide_index=True, width="stretch", column_config=wide)
    if len(picked_rows) > 500:
        st.caption(f"The first 500 of {len(picked_rows):,} shown; the download holds them all.")
else:
    st.info("Select points on the map (click, or draw a box or a lasso) to read their "
            "sentences here; or search a word above.", icon=":material/info:")  # fmt: skip

stem = f"corpus-map-{source}-{layer}-{correction}"
drawn = None if use_atlas else fig  # the atlas draws and saves its own figure
webapp.downloads.figure_and_table(drawn, lambda: cmap.table, shown, stem, "map")
share_link()
