"""Geometry.

How anisotropic each layer's vectors are (the expected cosine of random word pairs), how much a
few rogue dimensions dominate cosine similarity, and what each correction does about it.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

import webapp.caches
import webapp.state
from workbench.geometry import analysis as gr
from workbench.geometry.corrections import CORRECTION_LABELS
from workbench.geometry.figures import anisotropy_figure, rogue_figure, similarity_figure
from workbench.geometry.report import geometry_table

st.title("Geometry of the layers")
st.caption(
    "Contextual vectors are anisotropic: any two words have a high cosine similarity, mostly "
    "because of a few rogue dimensions (Ethayarajh 2019; Timkey & van Schijndel 2021). "
    "Corrections are fitted per layer on one half of the sentences and measured on the other."
)

c1, c2, c3 = st.columns([2, 1, 1])
reference = c1.selectbox("Corpus", webapp.caches.reference_options(), key="geometry_corpus")
n_sentences = c2.number_input(
    "Sentences (sample)", 100, 5000, 500, step=100, key="geometry_sample",
    disabled=reference == webapp.caches.DEMO_REFERENCE,
)  # fmt: skip
n_pairs = c3.number_input("Word pairs per layer", 1000, 100_000, 20_000, step=1000,
                          key="geometry_pairs")  # fmt: skip

sentences = webapp.caches.reference_sentences(reference, int(n_sentences))
emb = webapp.caches.encode_words(("reference", reference, len(sentences)), sentences,
                             text="Encoding the corpus…")  # fmt: skip
config = gr.GeometryConfig(n_pairs=int(n_pairs))
settings = webapp.state.current()
with webapp.state.user_errors():
    result = webapp.caches.geometry((settings.key, reference, len(sentences)), emb, config)

st.caption(
    f"{len(sentences):,} sentences, {len(emb):,} words: corrections fitted on "
    f"{result.n_fit_words:,} words, measures taken on {result.n_measure_words:,} held-out words "
    f"({result.n_types:,} word types)."
)
st.plotly_chart(anisotropy_figure(result), key="geometry_anisotropy")

table = geometry_table(result)
st.subheader("Per layer (raw vectors)")
st.dataframe(pd.DataFrame(list(table.rows), columns=list(table.columns)), hide_index=True,
             width="stretch")  # fmt: skip
for note in table.notes:
    st.caption(note)

st.subheader("One correction, one layer")
k1, k2 = st.columns([3, 2])
correction = k1.segmented_control(
    "Correction", list(result.corrections), format_func=CORRECTION_LABELS.get,
    default="zscore" if "zscore" in result.corrections else result.corrections[0],
    key="geometry_correction", required=True,
)  # fmt: skip
layer = k2.select_slider(
    "Layer for the rogue dimensions", list(result.layers),
    value=gr.most_anisotropic_layer(result), key="geometry_layer",
)  # fmt: skip
row = result.get(correction, layer)
m1, m2, m3 = st.columns(3)
m1.metric("anisotropy", f"{row.anisotropy.value:.3f}")
m2.metric(f"top-{config.top_k} dimensions' share", f"{row.rogue.top_share:.0%}")
m3.metric(f"r² without the top {config.top_k}", f"{row.rogue.informativity:.3f}")
st.plotly_chart(similarity_figure(result, correction), key="geometry_similarity")
rogue = rogue_figure(result, layer)
shown = {CORRECTION_LABELS["none"], CORRECTION_LABELS[correction]}
rogue.for_each_trace(lambda t: t.update(visible=True if t.name in shown else "legendonly"))
st.plotly_chart(rogue, key="geometry_rogue")
