"""Geometry.

How anisotropic each layer's vectors are (the expected cosine of random word pairs), how much a
few rogue dimensions dominate cosine similarity, and what each correction does about it.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

import webapp.downloads
import webapp.feedback
import webapp.layout
import webapp.settings
import webapp.sidebar
import webapp.urlstate
from webapp.caches import corpora, encodings, figures
from webapp.defaults import GEOMETRY_PAIRS, GEOMETRY_SAMPLE
from webapp.urlstate import Between, Param
from workbench.geometry import analysis as gr
from workbench.geometry.corrections import CORRECTION_LABELS, CORRECTIONS
from workbench.geometry.figures import anisotropy_figure, rogue_figure, similarity_figure
from workbench.geometry.report import geometry_table
from workbench.viz.export import ViewSettings

#: Every setting of the page (and the sidebar) in the URL: a link reopens the same view.
PARAMS = (
    *webapp.sidebar.SIDEBAR_PARAMS,
    Param(
        "geometry_corpus",
        "corpus",
        choices=corpora.reference_options,
        upgrade=corpora.reference_name,
    ),
    Param("geometry_sample", "sample", "int", choices=Between(100, 5000)),
    Param("geometry_pairs", "pairs", "int", choices=Between(1000, 100_000)),
    Param("geometry_correction", "correction", choices=tuple(CORRECTIONS)),
    Param("geometry_layer", "layer", "int", choices=Between(0, 1000)),
)


def two_line_header(frame: pd.DataFrame) -> pd.DataFrame:
    """The per-layer table as shown: its columns under two header lines (the measure over the
    variant: "anisotropy" over raw, centered, ...; "self-sim" over raw and adj.), the rogue
    dimensions as "d63 37%, d303 8%": narrow enough for 1280 px without a header cut or a cell
    wrapped onto five lines (the downloads keep the table as it is)."""
    header = []
    for column in frame.columns:
        measure, _, variant = str(column).partition(" ")
        if measure.startswith("top-") and "rogue" in variant:
            header.append(("rogue dims", f"{measure} (share)"))
        elif measure.startswith("top-"):
            header.append(("rogue dims", f"{measure} share"))
        else:
            header.append((measure, variant or ("" if measure == "layer" else "raw")))
    shown = frame.copy()
    rogue = [c for c in frame.columns if "rogue" in str(c)]
    for column in rogue:
        shown[column] = [str(v).replace(" (", " ").replace(")", "") for v in frame[column]]
    shown.columns = pd.MultiIndex.from_tuples(header)
    return shown


share = webapp.layout.header(
    "Geometry of the layers",
    "Contextual vectors are anisotropic: any two words have a high cosine similarity, mostly "
    "because of a few rogue dimensions (Ethayarajh 2019; Timkey & van Schijndel 2021). "
    "Corrections are fitted per layer on one half of the sentences and measured on the other.",
)  # the "copy link" control, filled once every widget is drawn
webapp.urlstate.restore(PARAMS)

c1, c2, c3 = st.columns([2, 1, 1], vertical_alignment="bottom")
reference = c1.selectbox(
    "Corpus",
    corpora.reference_options(),
    key="geometry_corpus",
    format_func=corpora.REFERENCE_LABELS.get,
)
# defaults through Session State only: a link's values are restored there (no warning)
st.session_state.setdefault("geometry_sample", GEOMETRY_SAMPLE)
st.session_state.setdefault("geometry_pairs", GEOMETRY_PAIRS)
n_sentences = c2.number_input(
    "Sentences (sample)", 100, 5000, step=100, key="geometry_sample",
    disabled=reference == "demo",
)  # fmt: skip
n_pairs = c3.number_input("Word pairs per layer", 1000, 100_000, step=1000,
                          key="geometry_pairs")  # fmt: skip

whole = reference == "demo"  # 170 sentences: the whole corpus, whatever the sample size says
config = gr.GeometryConfig(n_pairs=int(n_pairs))
settings = webapp.settings.current()
label = corpora.REFERENCE_LABELS[reference]
with webapp.feedback.waiting(
    f"Preparing {label}: reading it, sampling {'all' if whole else int(n_sentences)} sentences, "
    "encoding them and measuring every layer under every correction…"
):
    sentences = corpora.reference_sentences(reference, None if whole else int(n_sentences))
    emb = encodings.encode_words(("reference", reference, len(sentences)), sentences,
                                 text="Encoding the corpus…")  # fmt: skip
    with webapp.feedback.user_errors():
        result = figures.geometry((settings.key, reference, len(sentences)), emb, config)

data = {"corpus": reference, "n_sentences": len(sentences), "n_words": len(emb),
        "n_pairs": int(n_pairs)}  # fmt: skip
every = ViewSettings.of(emb, "geometry", "all", "none", "", None, data)
stem = f"geometry-{reference.split()[0].lower()}-{len(sentences)}"
aniso = anisotropy_figure(result)
aniso.update_layout(height=webapp.layout.FIGURE_HEIGHT)
st.plotly_chart(aniso, config=webapp.downloads.CHART_CONFIG, key="geometry_anisotropy")
st.caption(
    f"{len(sentences):,} sentences, {len(emb):,} words: corrections fitted on "
    f"{result.n_fit_words:,} words, measures taken on {result.n_measure_words:,} held-out words "
    f"({result.n_types:,} word types)."
)
webapp.downloads.figure_buttons(aniso, every, f"{stem}-anisotropy", "geometry_aniso_fig")

table = geometry_table(result)
frame = pd.DataFrame(list(table.rows), columns=list(table.columns))
st.subheader("Per layer (raw vectors)")
st.table(two_line_header(frame), hide_index=True)  # a table: every column shows, none scrolls
for note in table.notes:
    st.caption(note)
webapp.downloads.table_buttons(frame, every, f"{stem}-layers", "geometry_table")


@webapp.layout.fragment
def one_correction() -> None:
    """One correction at one layer, and the page's link: its controls rerun this alone (the
    figure and table above are the page's last full run's)."""
    st.subheader("One correction, one layer")
    k1, k2 = st.columns([3, 2])
    if st.session_state.get("geometry_correction") not in result.corrections:
        st.session_state["geometry_correction"] = (
            "zscore" if "zscore" in result.corrections else result.corrections[0]
        )
    if st.session_state.get("geometry_layer") not in result.layers:
        st.session_state["geometry_layer"] = gr.most_anisotropic_layer(result)
    correction = k1.segmented_control(
        "Correction", list(result.corrections), format_func=CORRECTION_LABELS.get,
        key="geometry_correction", required=True,
    )  # fmt: skip
    layer = k2.select_slider(
        "Layer for the rogue dimensions", list(result.layers), key="geometry_layer"
    )
    row = result.get(correction, layer)
    m1, m2, m3 = st.columns(3)
    m1.metric("anisotropy", f"{row.anisotropy.value:.3f}")
    m2.metric(f"top-{config.top_k} dimensions' share", f"{row.rogue.top_share:.0%}")
    m3.metric(f"r² without the top {config.top_k}", f"{row.rogue.informativity:.3f}")
    fixed = ViewSettings.of(emb, "geometry", "all", correction, reference, None, data)
    similarity = similarity_figure(result, correction)
    st.plotly_chart(similarity, config=webapp.downloads.CHART_CONFIG, key="geometry_similarity")
    webapp.downloads.figure_buttons(similarity, fixed, f"{stem}-{correction}-similarity",
                                    "geometry_similarity_fig")  # fmt: skip
    rogue = rogue_figure(result, layer)
    shown = {CORRECTION_LABELS["none"], CORRECTION_LABELS[correction]}
    rogue.for_each_trace(lambda t: t.update(visible=True if t.name in shown else "legendonly"))
    st.plotly_chart(rogue, config=webapp.downloads.CHART_CONFIG, key="geometry_rogue")
    at_layer = ViewSettings.of(emb, "geometry-rogue", str(layer), correction, reference, None, data)
    webapp.downloads.figure_buttons(rogue, at_layer, f"{stem}-rogue-layer{layer}",
                                    "geometry_rogue_fig")  # fmt: skip
    webapp.urlstate.link_control(
        PARAMS,
        None,
        f"the geometry of {corpora.REFERENCE_LABELS[reference]} ({len(sentences):,} sentences)",
        area=share,
    )


one_correction()
