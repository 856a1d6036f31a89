"""Explore.

Type sentences, pick a word, and see how similar its vector is to its other occurrences at every
layer (raw and corrected), and its nearest neighbours among all words of a reference corpus.
"""

from __future__ import annotations

import hashlib

import numpy as np
import streamlit as st

import webapp.caches
import webapp.state
from workbench.viz import neighbours as explore
from workbench.viz import plotting

DEFAULT_TEXT = """\
She deposited the cheque at the bank before noon.
We had a picnic on the grassy bank of the river.
The bank raised its interest rates again.
Fishermen lined the muddy bank at dawn.
He asked the bank for a small loan."""
CORRECTIONS = {"zscore": "z-score", "center": "centered", "abtt": "all-but-the-top",
               "whiten": "whitened"}  # fmt: skip

st.title("Explore a word across layers")
st.caption(
    "Type or paste sentences (one per line, or a paragraph). Pick a word that occurs more than "
    "once: the heatmap shows the cosine similarity of one occurrence's vector to every "
    "occurrence, layer by layer."
)

text = st.text_area("Sentences", value=DEFAULT_TEXT, height=150, key="explore_text")
with webapp.state.user_errors():
    sentences = explore.split_sentences(text)
text_key = hashlib.sha256(text.encode()).hexdigest()[:16]
emb = webapp.caches.encode_words(("text", text_key), sentences, text="Encoding your sentences…")

counts = explore.word_counts(sentences)
options = [w for w, _ in counts]
count_of = dict(counts)
word = st.pills(
    "Word (click one; the ones that occur more than once come first)", options,
    default=options[0] if options else None, key=f"explore_word_{text_key}", required=True,
    format_func=lambda w: f"{w} ×{count_of[w]}" if count_of[w] > 1 else w,
)  # fmt: skip
if not word:
    st.info("Click a word above to see its occurrences.")
    st.stop()

with webapp.state.user_errors():
    places = explore.find_word(sentences, word)
    rows = explore.locate_rows(emb.sentence_index, emb.word_index, places)
labels = [f"{n + 1}: {explore.snippet(sentences[s], i, 4)}" for n, (s, i) in enumerate(places)]

left, right = st.columns([3, 2])
query = left.selectbox(
    "Compare every occurrence with", range(len(places)), format_func=lambda n: labels[n],
    key=f"explore_query_{text_key}_{word}",
)  # fmt: skip
reference = right.selectbox(
    "Reference corpus", webapp.caches.reference_options(), key="explore_reference",
    help="Fits the correction and holds the words searched for neighbours (WordNet and SemCor: "
    "a seeded 500-sentence sample).",
)  # fmt: skip
correction = right.selectbox(
    "Correction", list(CORRECTIONS), format_func=CORRECTIONS.get, key="explore_correction",
    help="Fitted per layer on the reference corpus: z-score = subtract the mean, divide by the "
    "standard deviation of every dimension.",
)  # fmt: skip

ref_sentences = webapp.caches.reference_sentences(reference)
ref_emb = webapp.caches.encode_words(
    ("reference", reference, len(ref_sentences)), ref_sentences,
    text="Encoding the reference corpus…",
)  # fmt: skip
settings = webapp.state.current()
post = webapp.caches.fitted_correction((settings.key, reference), correction, ref_emb.vectors)
own = np.asarray(emb.vectors[rows])
with webapp.state.user_errors():
    raw_sim = explore.layerwise_similarity(own, query)
    fixed_sim = explore.layerwise_similarity(post.transform(own), query)
layer_labels = [str(layer) for layer in emb.layers]
fig = plotting.similarity_heatmaps(
    [("raw vectors", raw_sim), (f"{CORRECTIONS[correction]} vectors", fixed_sim)],
    labels, layer_labels,
)  # fmt: skip
st.subheader(f"“{word}”: similarity to occurrence {query + 1}, layer by layer")
if len(places) == 1:
    st.warning(f"“{word}” occurs only once; add sentences that use it again to compare.")
st.plotly_chart(fig, key="explore_heatmap")

st.subheader(f"Nearest neighbours of occurrence {query + 1} at layers {settings.layers}")
use_fixed = st.toggle(f"Search among {CORRECTIONS[correction]} vectors", key="explore_nn_fixed")
with webapp.state.user_errors():
    pool_layer, index = webapp.caches.neighbour_pool(
        (settings.key, settings.layers, reference, text_key, use_fixed and correction),
        ref_emb, emb, post if use_fixed else None, settings.layers,
    )  # fmt: skip
own_row = len(ref_emb) + rows[query]
scores, found = index.search(pool_layer[own_row], k=10, exclude=[own_row])
n_ref = len(ref_emb)


def _context(row: int) -> tuple[str, str]:
    e, r, where = (ref_emb, row, "reference") if row < n_ref else (emb, row - n_ref, "your text")
    sent = ref_sentences if row < n_ref else sentences
    words = sent[int(e.sentence_index[r])]
    return explore.snippet(words, int(e.word_index[r]), 6), where


contexts = [_context(int(r)) for r in found]
st.dataframe(
    {
        "word": [str(ref_emb.words[r] if r < n_ref else emb.words[r - n_ref]) for r in found],
        "cosine": np.round(scores, 3),
        "context": [c for c, _ in contexts],
        "from": [w for _, w in contexts],
    },
    hide_index=True, width="stretch",
)  # fmt: skip
st.caption(
    f"Searched {len(pool_layer):,} words: {n_ref:,} of the reference corpus and {len(emb):,} "
    "of your text (exact cosine search with FAISS)."
)
