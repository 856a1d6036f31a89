"""Senses.

A word's occurrences, projected to 2-D or 3-D at one layer or at every layer, coloured by
sense (Coenen et al. 2019, "Visualizing and Measuring the Geometry of BERT").
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import streamlit as st

import webapp.downloads
import webapp.feedback
import webapp.layout
import webapp.senses_panes
import webapp.settings
import webapp.sidebar
import webapp.urlstate
from webapp.caches import corpora, encodings, figures, indexes
from webapp.text import plain
from webapp.urlstate import Between, Param
from workbench.corpora import occurrences as occ
from workbench.escaping import plotly_text
from workbench.fileio import sha256_bytes
from workbench.lexicon.wordnet import POS_TAGS
from workbench.viz import plotting
from workbench.viz.projection import ProjectionConfig
from workbench.wsd.occurrence_senses import predict_senses

SOURCES = {
    "demo": "demo texts (data/demo)",
    "semcor": "SemCor (gold senses)",
    "wordnet": "WordNet usage examples",
    "upload": "a text file",
}
METHODS = {"umap": "UMAP", "pca": "PCA", "tsne": "t-SNE"}
POS_CHOICES = (None, *POS_TAGS)
VIEWS = ("one layer", "every layer", "several words")
#: Every setting of the page (and the sidebar) in the URL: a link reopens the same view.
PARAMS = (
    *webapp.sidebar.SIDEBAR_PARAMS,
    Param("senses_source", "source", choices=tuple(SOURCES)),
    Param("senses_demo_word", "demo_word", choices=occ.demo_words),
    Param("senses_lemma", "word"),
    Param("senses_pos", "pos", "optional", choices=POS_CHOICES),
    Param("senses_limit", "limit", "int", choices=Between(20, 5000)),
    Param("senses_method", "method", choices=tuple(METHODS)),
    Param("senses_dims", "dims", "int", choices=(2, 3)),
    Param("senses_nn", "nn", "int", choices=Between(2, 100)),
    Param("senses_min_dist", "min_dist", "float", choices=Between(0.0, 0.99)),
    Param("senses_seed", "seed", "int", choices=Between(0, 2**31 - 1)),
    Param("senses_view", "view", choices=VIEWS),
    Param("senses_colour", "colour", choices=("gold", "predicted")),
    Param("senses_layer", "layer"),
    *webapp.senses_panes.SENSES_PANE_PARAMS,
)

share = webapp.layout.header(
    "Sense clusters",
    "Each point is one occurrence of the word, its vector projected to 2-D or 3-D. Occurrences "
    "with the same sense tend to gather; hover over a point to read its sentence and the "
    "sense's definition. The large crosses (diamonds in 3-D) are the sense centroids.",
)  # the "copy link" control, filled once every widget is drawn
webapp.urlstate.restore(PARAMS)

# ------------------------------------------------------------------ what to show
sources = [s for s in SOURCES if s != "semcor" or "semcor" in corpora.available_datasets()]
# two rows of controls: what to show, the projection and the search; then the view, the
# colours, side by side and the layer (every option whole at 1280 px)
c1, c2, c3, c4, c5, c6 = st.columns([2.4, 1.8, 1, 1.2, 1.6, 2.2], vertical_alignment="bottom")
v2, v3, v4, v5 = st.columns([3.4, 1.9, 1.8, 2.9], vertical_alignment="bottom")
source = c1.selectbox("Occurrences from", sources, format_func=SOURCES.get, key="senses_source")
pos, limit, upload, upload_name = None, None, None, "upload"
if source == "demo":
    lemma = c2.selectbox(
        "Word", occ.demo_words(), key="senses_demo_word",
        help="The demo texts hold these words; for any other word (plant, cell, …) choose "
        "SemCor or WordNet usage examples as the source.",
    )  # fmt: skip
else:
    st.session_state.setdefault("senses_lemma", "bank")
    lemma = c2.text_input("Word (lemma)", key="senses_lemma").strip().lower()
    if source in ("semcor", "wordnet", "upload"):
        pos = c3.selectbox(
            "POS", POS_CHOICES, format_func=lambda p: p or "any", key="senses_pos",
            help="In an upload, the word's POS as the workbench's tagger reads it in its sentence "
            "(workbench.corpora.tagging).",
        )  # fmt: skip
    if source == "semcor":
        st.session_state.setdefault("senses_limit", 300)
        limit = c4.number_input("At most", 20, 5000, step=50, key="senses_limit")
    if source == "upload":
        file = st.file_uploader(
            "A UTF-8 text file, one sentence per line; optionally `label<TAB>sentence` with the "
            "word in [brackets]", type=None, key="senses_upload",
        )  # fmt: skip
        if file is None:
            webapp.urlstate.ask_for_upload(
                PARAMS, "view", "Upload a text file to see the occurrences of the word in it."
            )
        upload, upload_name = file.getvalue(), file.name

with webapp.feedback.waiting(
    f"Finding the occurrences of “{plain(lemma)}” in {SOURCES[source]} and encoding them…"
):
    corpus = corpora.corpus("semcor") if source == "semcor" else None
    with webapp.feedback.user_errors():
        found = corpora.occurrences(source, lemma, pos, limit, upload, upload_name, _corpus=corpus)
    upload_hash = sha256_bytes(upload)[:16] if upload else ""
    occ_key = (source, lemma, pos, limit, upload_hash)
    ov = encodings.encode_occurrences(occ_key, found)

# ------------------------------------------------------------------ how to project
settings = webapp.settings.current()
emb = ov.emb
layer_options = [str(i) for i in emb.layers]
if settings.layers not in layer_options:
    layer_options.append(settings.layers)
#: The defaults through Session State only: a link's values are restored there, and a widget
#: given a default beside them makes Streamlit log a warning.
for _key, _default in (("senses_nn", 15), ("senses_min_dist", 0.1), ("senses_view", "one layer"),
                       ("senses_colour", "gold")):  # fmt: skip
    st.session_state.setdefault(_key, _default)
with c5.popover("Projection", icon=":material/tune:", width="stretch",
                help="The projection's method and settings (UMAP, PCA or t-SNE)"):  # fmt: skip
    p1, p2, p3, p4, p5 = st.columns(5)
    method = p1.selectbox("Method", list(METHODS), format_func=METHODS.get, key="senses_method")
    dims = p2.radio("Dimensions", (2, 3), horizontal=True, key="senses_dims")
    n_neighbors = p3.slider("UMAP n_neighbors", 2, 100, key="senses_nn",
                            disabled=method != "umap")  # fmt: skip
    min_dist = p4.slider("UMAP min_dist", 0.0, 0.99, step=0.01, key="senses_min_dist",
                         disabled=method != "umap")  # fmt: skip
    seed = p5.number_input("random_state", 0, 2**31 - 1, key="senses_seed")  # default: 0
config = ProjectionConfig(method=method, n_components=dims, n_neighbors=n_neighbors,
                          min_dist=min_dist, random_state=int(seed))  # fmt: skip


@webapp.layout.fragment
def the_view() -> None:
    """The view, side by side, the colours and the layer, and what they show: these controls
    rerun this alone (the word's occurrences and vectors are the page's last full run's)."""
    view = v2.segmented_control(
        "View", VIEWS, key="senses_view",
        help="several words: their occurrences in one projection, coloured by word, then by sense",
    ) or "one layer"  # fmt: skip
    compare = v4.toggle(
        "Side by side", key="senses_compare", disabled=view != "one layer",
        help="Two panes, each with its own model, layers and correction, the same occurrences.",
    )  # fmt: skip
    if st.session_state.get("senses_layer") not in layer_options:
        st.session_state["senses_layer"] = settings.layers  # the default, or a layer it lacks
    side_by_side = compare and view == "one layer"
    if side_by_side:  # each pane has its own layers, and colours by gold sense: the page's
        # layer and colour are not shown (their values kept for when the panes go)
        for kept in ("senses_layer", "senses_colour"):
            st.session_state[kept] = st.session_state[kept]
        colour, layer = "gold", str(st.session_state["senses_layer"])
        v5.caption(f"Each pane has its own model, layers and correction; both start as layers "
                   f"{layer}, raw vectors, coloured by gold sense.")  # fmt: skip
    else:
        colour = v3.segmented_control(
            "Colour by sense", ("gold", "predicted"), key="senses_colour"
        ) or "gold"  # fmt: skip
        layer = v5.select_slider(
            f"Layer (0 = embedding output … {emb.layers[-1]} = last)",
            layer_options, key="senses_layer", disabled=view == "every layer",
            help=f"One hidden state, or the sidebar's {settings.layers}.",
        )  # fmt: skip

    data = {"lemma": lemma, "source": source, "pos": pos, "limit": limit,
            "upload": upload_name if source == "upload" else None}  # fmt: skip
    link_extra = {"upload": upload_name} if source == "upload" else None
    missing = [f"the uploaded file {upload_name}"] if source == "upload" else []

    def share_link() -> None:
        """The "copy link" control, at the top of the page."""
        what = f"“{lemma}” from {SOURCES[source]} in the {view} view" + (" side by side" * compare)
        webapp.urlstate.link_control(PARAMS, link_extra, what, missing, area=share)

    if view == "several words":
        with st.container():
            webapp.senses_panes.words(source, pos, limit, layer, config)
        share_link()
        return
    if side_by_side:
        if len(found) < 3:
            st.warning("At least 3 occurrences are needed for a projection; choose another word.")
            return
        webapp.senses_panes.compare(found, occ_key, config, lemma, data, layer)
        share_link()
        return

    # ------------------------------------------------------------------ labels and hover text
    gold = [o.label or "(no label)" for o in ov.occurrences]
    if colour == "gold" and not any(o.label for o in ov.occurrences):
        st.info(
            "These sentences carry no sense labels: choose “predicted” to colour them by sense."
        )
    labels, predicted_note = gold, ""
    if colour == "predicted":
        layer_spec = layer if view == "one layer" else settings.layers
        bi = indexes.biencoder(settings)  # the model's WSD bi-encoder, when it has one
        with (
            webapp.feedback.user_errors(),
            webapp.feedback.waiting(
                f"Predicting the sense of each occurrence of “{plain(lemma)}”…"
            ),
        ):
            if bi is not None:
                prediction = indexes.biencoder_prediction(bi, occ_key, ov.occurrences, lemma,
                                                          pos)  # fmt: skip
            else:
                training = corpora.training_occurrences(lemma, pos)
                prediction = predict_senses(
                    ov, training, layer_spec, encode=encodings.encode_occurrence_list
                )
        labels = list(prediction.labels)
        predicted_note = prediction.describe(lemma)
    gl = corpora.glosses(tuple(dict.fromkeys(gold + labels)))
    names = occ.sense_names(gl)
    categories = sorted(set(gold) | set(labels))  # one colour per sense, gold or predicted
    hover = [
        plotting.hover_text(o.words, o.index, gl.get(lab, ""), lab)
        for o, lab in zip(ov.occurrences, labels)
    ]

    # ------------------------------------------------------------------ project and draw
    key = (settings.key, occ_key)
    if len(found) < 3:
        st.caption(f"{len(found)} occurrences of “{plain(lemma)}” from {SOURCES[source]}.")
        st.warning(
            "At least 3 occurrences are needed for a projection; choose another word or source."
        )
        return
    with (
        webapp.feedback.user_errors(),
        webapp.feedback.waiting(f"Projecting {len(found):,} occurrences with {METHODS[method]}…"),
    ):
        if view == "one layer":
            coords = figures.projection((key, layer), emb.select(layer), config)
            title = (f"“{lemma}”, layers {layer}, {METHODS[method]}: {len(found)} occurrences from "
                     f"{SOURCES[source]}")  # fmt: skip
            fig = plotting.sense_scatter(coords, labels, hover, title=title, names=names,
                                         categories=categories)  # fmt: skip
        else:
            two_d = dataclasses.replace(config, n_components=2)
            all_coords = figures.layer_projections(key, np.asarray(emb.vectors), two_d)
            title = f"“{lemma}” at every layer, {METHODS[method]}"
            fig = plotting.small_multiples(
                all_coords, labels, hover, [f"layer {i}" for i in emb.layers], n_cols=4,
                names=names, categories=categories,
            )  # fmt: skip
            fig.update_layout(title=plotly_text(title))
    if view == "one layer":
        fig.update_layout(height=max(webapp.layout.FIGURE_HEIGHT, fig.layout.height or 0))
        webapp.senses_panes.explore_map(fig, coords, ov, layer, labels, "senses", find_area=c6)
    else:
        st.plotly_chart(fig, config=webapp.downloads.CHART_CONFIG, key="senses_chart")
    if predicted_note:
        st.caption(plain(predicted_note))
    measured_at = layer if view == "one layer" else settings.layers
    with (
        webapp.feedback.user_errors(),
        webapp.feedback.waiting("Measuring how well the senses separate at every layer…"),
    ):
        measured = figures.sense_view((settings.key, occ_key, "none", ""), ov, measured_at,
                                      None, None, "", data)  # fmt: skip
    webapp.senses_panes.single_separation(measured, lemma)

    # ------------------------------------------------------------------ export
    def table() -> pd.DataFrame:
        """The occurrences with their coordinates: made when the section is open or a download
        button is clicked, not on every rerun."""
        rows = occ.occurrence_table(
            ov.occurrences, gl, coords if view == "one layer" else None,
            predicted=labels if colour == "predicted" else None,
        )  # fmt: skip
        if view != "one layer":
            for layer_id, panel in zip(emb.layers, all_coords):
                rows[f"x_layer{layer_id}"], rows[f"y_layer{layer_id}"] = panel[:, 0], panel[:, 1]
        return rows

    stem = f"senses-{lemma}-{source}-{layer if view == 'one layer' else 'all-layers'}"
    shown = webapp.senses_panes.single_settings(
        ov, layer if view == "one layer" else "all", config, {**data, "colour": colour}
    )  # fmt: skip
    webapp.downloads.figure_and_table(fig, table, shown, stem, "senses")
    listed = st.expander("Occurrences", key="senses_occurrences_open", on_change="rerun")
    if listed.open:  # the table drawn only while open (folded, the browser draws it all the same)
        listed.dataframe(table(), hide_index=True, width="stretch")
    share_link()


the_view()
