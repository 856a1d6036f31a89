"""Explore.

Type sentences, pick a word, and see how similar its vector is to its other occurrences at every
layer (raw and corrected), and its nearest neighbours among all words of a reference corpus.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

import webapp.downloads
import webapp.explore_panes
import webapp.feedback
import webapp.layout
import webapp.loaded_model
import webapp.settings
import webapp.sidebar
import webapp.urlstate
from webapp.caches import corpora, encodings, figures
from webapp.defaults import EXPLORE_TEXT
from webapp.text import plain
from webapp.urlstate import Param
from workbench.geometry.corrections import CORRECTION_LABELS, CORRECTIONS
from workbench.viz import neighbours as explore
from workbench.viz import plotting
from workbench.viz.export import ViewSettings
from workbench.viz.neighbours import PoolPart

FITTED_CORRECTIONS = [name for name in CORRECTIONS if name != "none"]
#: Every setting of the page (and the sidebar) in the URL; the word and the occurrence are
#: added once the text is known (their widget keys depend on it).
PARAMS = (
    *webapp.sidebar.SIDEBAR_PARAMS,
    Param("explore_text", "text"),
    Param("explore_reference", "reference", upgrade=corpora.reference_name),
    Param("explore_correction", "correction", choices=FITTED_CORRECTIONS),
    Param("explore_fit_scale", "fit", "bool"),
    Param("explore_nn_fixed", "nn_fixed", "bool"),
    *webapp.explore_panes.EXPLORE_PANE_PARAMS,
)

share = webapp.layout.header(
    "Explore a word across layers",
    "Type or paste sentences (one per line, or a paragraph). Pick a word that occurs more than "
    "once: the heatmap shows the cosine similarity of one occurrence's vector to every "
    "occurrence, layer by layer.",
)  # the "copy link" control, filled once every widget is drawn
webapp.urlstate.restore(PARAMS)
#: A link made from a text too long to carry says so (``long_text``: the text's short hash).
LONG_TEXT = "long_text"
wanted = st.query_params.get(LONG_TEXT)
if wanted and "text" not in st.query_params and "explore_text" not in st.session_state:
    st.session_state["explore_text"] = ""  # not the default text: this link's text is missing
st.session_state.setdefault("explore_text", EXPLORE_TEXT)
#: The sentences and the word, folded once set: the heatmap on the first screen.
inputs = st.expander("Your sentences and the word", icon=":material/edit_note:",
                     expanded=not st.session_state["explore_text"].strip())  # fmt: skip
text = inputs.text_area("Sentences", height=150, key="explore_text")
if wanted and not text.strip():
    st.info(
        f"This link's view used a text longer than {webapp.urlstate.MAX_TEXT:,} characters, "
        "which a link cannot carry: paste that text above to see the view (the rest of the "
        "link's settings are kept).",
        icon=":material/link:",
    )
    webapp.urlstate.publish(PARAMS, {LONG_TEXT: wanted})
    st.stop()
with webapp.feedback.user_errors():
    sentences = explore.split_sentences(text)
text_key = encodings.text_key(text)
emb = encodings.encode_words(("text", text_key), sentences, text="Encoding your sentences…")

counts = explore.word_counts(sentences)
options = [w for w, _ in counts]
count_of = dict(counts)
word_param = Param(f"explore_word_{text_key}", "word", choices=options)
webapp.urlstate.restore([word_param])
if options:  # the default through Session State only: a link's word is restored there too
    st.session_state.setdefault(f"explore_word_{text_key}", options[0])
word = inputs.pills(
    "Word (click one; the ones that occur more than once come first)", options,
    key=f"explore_word_{text_key}", required=True,
    format_func=lambda w: f"{plain(w)} ×{count_of[w]}" if count_of[w] > 1 else plain(w),
)  # fmt: skip
if not word:
    st.info("Open “Your sentences and the word” above and click a word to see its occurrences.")
    st.stop()

with webapp.feedback.user_errors():
    places = explore.find_word(sentences, word)
    rows = explore.locate_rows(emb.sentence_index, emb.word_index, places)
labels = [f"{n + 1}: {explore.snippet(sentences[s], i, 4)}" for n, (s, i) in enumerate(places)]
query_param = Param(f"explore_query_{text_key}_{word}", "query", "int",
                    choices=range(len(places)))  # fmt: skip
webapp.urlstate.restore([query_param])
all_params = (*PARAMS, word_param, query_param)


def share_link() -> None:
    """The "copy link" control, at the top of the page."""
    long_text = len(text) > webapp.urlstate.MAX_TEXT
    missing = [f"your text (longer than {webapp.urlstate.MAX_TEXT:,} characters)"] * long_text
    extra = {LONG_TEXT: text_key} if long_text else None
    webapp.urlstate.link_control(all_params, extra, f"“{word}” in your text", missing, area=share)


@webapp.layout.fragment
def view() -> None:
    """Everything below the text and the word: its controls rerun this alone (the sidebar,
    the text's encoding and the word list are the page's last full run's)."""
    left, middle, right, last = st.columns([3, 2, 2, 2], vertical_alignment="bottom")
    query = left.selectbox(
        "Compare every occurrence with", range(len(places)), format_func=lambda n: labels[n],
        key=f"explore_query_{text_key}_{word}",
    )  # fmt: skip
    reference = middle.selectbox(
        "Reference corpus", corpora.reference_options(), key="explore_reference",
        format_func=corpora.REFERENCE_LABELS.get,
        help="Fits the correction and holds the words searched for neighbours (WordNet and SemCor: "
        "a seeded 500-sentence sample).",
    )  # fmt: skip
    compare = last.toggle(
        "Side by side", key="explore_compare",
        help="Two panes, each with its own model, layers and correction, over the same text (both "
        "start with this page's correction).",
    )  # fmt: skip
    st.session_state.setdefault("explore_fit_scale", True)  # no default beside a link's value
    fit = last.toggle(
        "Fitted colour scale", key="explore_fit_scale", disabled=compare,
        help="On: the colours span these values; off: the full range −1 … 1. Contextual vectors "
        "are anisotropic: most cosines lie between 0.3 and 1, where the full scale shows one "
        "colour.",
    )  # fmt: skip
    if compare:  # each pane has its own correction: the page's is not shown (its value is kept)
        correction = st.session_state.setdefault("explore_correction", "zscore")
        st.session_state["explore_correction"] = correction
        right.caption(f"Each pane has its own correction; both start as "
                      f"{CORRECTION_LABELS[correction]}.")  # fmt: skip
        webapp.explore_panes.compare(
            sentences, text_key, word, places, query, reference, correction
        )
        share_link()
        return
    correction = right.selectbox(
        "Correction", FITTED_CORRECTIONS, format_func=CORRECTION_LABELS.get,
        key="explore_correction",
        help=f"Fitted per layer on the reference corpus: {CORRECTION_LABELS['zscore']} = subtract "
        "the mean, divide by the standard deviation of every dimension.",
    )  # fmt: skip

    settings = webapp.settings.current()
    with webapp.feedback.waiting(
        f"Fitting the {CORRECTION_LABELS[correction]} correction on "
        f"{corpora.REFERENCE_LABELS[reference]} (its sample encoded once)…"
    ):
        ref_sentences = corpora.reference_sentences(reference)
        ref_emb = encodings.encode_words(
            ("reference", reference, len(ref_sentences)), ref_sentences,
            text="Encoding the reference corpus…",
        )  # fmt: skip
        enc = webapp.loaded_model.encoder(settings)
        post = encodings.fitted_correction(
            (settings.key, reference), correction, reference, enc, ref_emb
        )
    data = {"word": word, "occurrence": query + 1, "n_occurrences": len(places),
            "text_sha256": text_key, "n_sentences": len(sentences)}  # fmt: skip
    own = np.asarray(emb.vectors[rows])
    st.subheader(f"“{plain(word)}”: similarity to occurrence {query + 1}, layer by layer")
    if len(places) == 1:
        repeated = [w for w, n in counts if n > 1]
        st.info(
            f"“{word}” occurs only once in your text, and the heatmap compares the occurrences of "
            "a word with each other: add sentences that use it again"
            + (f", or pick a word that repeats ({', '.join(repeated[:5])})." if repeated else ".")
            + " Its nearest neighbours in the reference corpus are below.",
            icon=":material/info:",
        )  # fmt: skip
    else:
        with webapp.feedback.user_errors():
            raw_sim = explore.layerwise_similarity(own, query)
            fixed_sim = explore.layerwise_similarity(post.transform(own), query)
        layer_labels = [str(layer) for layer in emb.layers]
        fig = plotting.similarity_heatmaps(
            [("raw vectors", raw_sim), (f"{CORRECTION_LABELS[correction]} vectors", fixed_sim)],
            labels, layer_labels, fit_scale=fit,
        )  # fmt: skip
        fig.update_layout(height=max(webapp.layout.FIGURE_HEIGHT, fig.layout.height))
        st.plotly_chart(fig, config=webapp.downloads.CHART_CONFIG, key="explore_heatmap")
        shown = ViewSettings.of(emb, "explore-similarity", "all", correction, reference, None, data)
        panels = {"none": raw_sim, correction: fixed_sim}
        stem = f"explore-{word}-similarity"
        row = webapp.downloads.row()
        webapp.downloads.figure_buttons(fig, shown, stem, "explore_heatmap_fig", row)
        webapp.downloads.table_buttons(
            webapp.explore_panes.similarity_rows(labels, panels, emb.layers), shown, stem,
            "explore_heatmap_table", row,
        )  # fmt: skip

    st.subheader(f"Nearest neighbours of occurrence {query + 1} at layers {settings.layers}")
    use_fixed = st.toggle(
        f"Search among {CORRECTION_LABELS[correction]} vectors", key="explore_nn_fixed"
    )
    parts = (PoolPart("reference", ref_sentences, ref_emb), PoolPart("your text", sentences, emb))
    with (
        webapp.feedback.user_errors(),
        webapp.feedback.waiting(
            f"Indexing the {len(ref_emb) + len(emb):,} words searched for neighbours…"
        ),
    ):
        pool = figures.neighbour_pool(
            (settings.key, settings.layers, reference, text_key, use_fixed and correction),
            parts, post if use_fixed else None, settings.layers,
        )  # fmt: skip
        found = pool.nearest(1, rows[query], k=10)
    table = webapp.explore_panes.neighbour_rows(found)
    # a markdown table, not a grid: the contexts wrap, and no pandas is imported while the
    # heatmap above is drawn
    st.markdown(webapp.explore_panes.neighbour_table(table))
    st.caption(
        f"Searched {len(pool):,} words: {len(ref_emb):,} of the reference corpus and {len(emb):,} "
        "of your text (exact cosine search with FAISS)."
    )
    near = ViewSettings.of(emb, "explore-neighbours", settings.layers,
                           correction if use_fixed else "none", reference, None, data)  # fmt: skip
    webapp.downloads.table_buttons(table, near,
                                   f"explore-{word}-neighbours", "explore_nn_table")  # fmt: skip
    share_link()


view()
