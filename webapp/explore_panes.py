"""The Explore page side by side: two panes, each with its own model, layer (or layer
combination) and correction, over the same typed text and the same occurrence of the word.

Each pane shows the similarity of the word's occurrences to the chosen one at every layer (after
its correction), the words of the text projected at its layer (the same projection settings and
seed in both panes, the word's occurrences numbered), and the nearest neighbours at its layer
among the reference corpus and the text. Every figure and table has download buttons; the
widgets' values are in the URL (:data:`EXPLORE_PANE_PARAMS`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import streamlit as st

import webapp.downloads
import webapp.feedback
import webapp.text
from webapp.caches import corpora, encodings, figures
from webapp.panes import PANES, Pane, pane_params, pane_settings, pane_widgets
from webapp.urlstate import Between, Param
from workbench.encoding.pooling import combine_layers
from workbench.escaping import plotly_text
from workbench.fileio import sha256_words
from workbench.geometry.corrections import CORRECTION_LABELS
from workbench.viz import neighbours as explore
from workbench.viz import plotting
from workbench.viz.export import ViewSettings
from workbench.viz.neighbours import PoolPart
from workbench.viz.projection import METHODS, ProjectionConfig

#: The Explore page's comparison widgets in the URL; the page adds its own.
EXPLORE_PANE_PARAMS = (
    *pane_params("explore"),
    Param("explore_compare", "compare", "bool"),
    Param("explore_method", "method", choices=METHODS),
    Param("explore_seed", "seed", "int", choices=Between(0, 2**31 - 1)),
)


def similarity_rows(
    labels: Sequence[str], panels: Mapping[str, np.ndarray], layers: Sequence[int]
) -> list[dict[str, Any]]:
    """One row per occurrence and panel (``raw``, a correction...): its cosine to the chosen
    occurrence at every layer; ``panels`` maps a name to ``(n_occurrences, n_layers)``."""
    return [
        {
            "occurrence": name,
            "vectors": panel,
            **{f"layer {v}": float(x) for v, x in zip(layers, r)},
        }
        for panel, sims in panels.items()
        for name, r in zip(labels, sims)
    ]


def neighbour_rows(found: Sequence[explore.Neighbour]) -> list[dict[str, Any]]:
    """The nearest neighbours as table rows (rank, word, cosine, context, where from)."""
    return [{"rank": i, "word": n.word, "cosine": round(n.cosine, 4), "context": n.context,
             "from": n.part} for i, n in enumerate(found, start=1)]  # fmt: skip


def neighbour_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """:func:`neighbour_rows` as a markdown table (cosines to 3 decimals), for ``st.markdown``:
    the contexts wrap, and no pandas or pyarrow is imported to show it
    (:func:`webapp.text.markdown_table`)."""
    shown = [{**row, "cosine": f"{row['cosine']:.3f}"} for row in rows]
    return webapp.text.markdown_table(shown, right={"rank", "cosine"})


def _pane(
    pane: Pane,
    area: Any,
    sentences: list[list[str]],
    text_key: str,
    word: str,
    places: Sequence[tuple[int, int]],
    query: int,
    reference: str,
    config: ProjectionConfig,
) -> None:
    settings = pane_settings(pane)
    emb = encodings.encode_words(
        ("text", text_key), sentences, text="Encoding your sentences…", settings=settings
    )
    ref_sentences = corpora.reference_sentences(reference)
    ref_emb = encodings.encode_words(("reference", reference, len(ref_sentences)),
                                     ref_sentences, text="Encoding the reference corpus…",
                                     settings=settings)  # fmt: skip
    with webapp.feedback.user_errors(area):
        post = encodings.reference_correction(settings, reference, pane.correction)
        rows = explore.locate_rows(emb.sentence_index, emb.word_index, places)
        vectors = np.asarray(emb.vectors)
        fixed = post.transform(vectors) if post is not None else vectors
        picked = combine_layers(fixed, emb.layers, pane.layer, emb.n_hidden)
    label = f"{pane.name.upper()}: {emb.model_name}, {CORRECTION_LABELS[pane.correction]}"
    data = {"word": word, "occurrence": query + 1, "n_occurrences": len(places),
            "text_sha256": sha256_words(sentences), "n_sentences": len(sentences)}  # fmt: skip
    occ_labels = [f"{n + 1}: {explore.snippet(sentences[s], i, 4)}"
                  for n, (s, i) in enumerate(places)]  # fmt: skip
    stem = f"explore-{word}-{pane.name}-{pane.layer}-{pane.correction}"

    # similarity to the chosen occurrence at every layer
    sims = explore.layerwise_similarity(fixed[rows], query)
    heat = plotting.similarity_heatmaps(  # half the page wide: the values are in the hover
        [(label, sims)], occ_labels, [str(v) for v in emb.layers], fit_scale=True, show_values=False
    )
    heat.update_layout(
        title=dict(text=plotly_text(webapp.text.short(label, 60)), font=dict(size=14))
    )
    heat.layout.annotations = ()  # the subplot title repeats the (cut) title
    heat.update_layout(height=max(260, 110 + 30 * len(places)))
    area.plotly_chart(
        heat, config=webapp.downloads.CHART_CONFIG, key=f"explore_{pane.name}_heatmap"
    )
    every = ViewSettings.of(emb, "explore-similarity", "all", pane.correction, reference, None,
                            data)  # fmt: skip
    sim_rows = similarity_rows(occ_labels, {pane.correction: sims}, emb.layers)
    webapp.downloads.figure_and_table(heat, sim_rows, every, f"{stem}-similarity",
                                      f"explore_{pane.name}_similarity", area)  # fmt: skip

    # the text's words projected at the pane's layer
    mine = {int(r) for r in rows}
    number = {int(r): n for n, r in enumerate(rows)}
    labels = [f"{word} {number[i] + 1}" if i in mine else "other words" for i in range(len(emb))]
    hover = [plotting.hover_text(sentences[s], int(w)) for s, w in
             zip(emb.sentence_index, emb.word_index)]  # fmt: skip
    with webapp.feedback.user_errors(area):
        key = (settings.key, text_key, pane.layer, pane.correction, reference)
        coords = figures.projection(key, picked, config)
    scatter = plotting.sense_scatter(coords, labels, hover, names={}, centroids=False,
                                     title=f"{pane.name.upper()}: your text's words at layers "
                                     f"{pane.layer}")  # fmt: skip
    scatter.update_layout(height=460, legend=dict(title="word"), title=dict(font=dict(size=14)))
    area.plotly_chart(
        scatter, config=webapp.downloads.CHART_CONFIG, key=f"explore_{pane.name}_projection"
    )
    shown = ViewSettings.of(emb, "explore-projection", pane.layer, pane.correction, reference,
                            config, data)  # fmt: skip
    coord_rows = [{"word": w, "sentence": int(s) + 1, "position": int(i), "label": lab,
                   "x": float(x), "y": float(y)}
                  for w, s, i, lab, (x, y) in zip(emb.words, emb.sentence_index, emb.word_index,
                                                  labels, coords[:, :2])]  # fmt: skip
    webapp.downloads.figure_and_table(scatter, coord_rows, shown, f"{stem}-projection",
                                      f"explore_{pane.name}_projection_files", area)  # fmt: skip

    # nearest neighbours at the pane's layer, after its correction
    parts = (PoolPart("reference", ref_sentences, ref_emb), PoolPart("your text", sentences, emb))
    with webapp.feedback.user_errors(area):
        pool = figures.neighbour_pool(
            (settings.key, pane.layer, reference, text_key, pane.correction),
            parts, post, pane.layer,
        )  # fmt: skip
        found = pool.nearest(1, int(rows[query]), k=10)
    table = neighbour_rows(found)
    area.markdown(f"**Nearest neighbours of occurrence {query + 1} at layers {pane.layer}**")
    area.markdown(neighbour_table(table))  # a table, not a grid: the contexts wrap
    near = ViewSettings.of(emb, "explore-neighbours", pane.layer, pane.correction, reference,
                           None, data)  # fmt: skip
    webapp.downloads.table_buttons(table, near, f"{stem}-neighbours", f"explore_{pane.name}_nt",
                                   area)  # fmt: skip


def compare(
    sentences: list[list[str]],
    text_key: str,
    word: str,
    places: Sequence[tuple[int, int]],
    query: int,
    reference: str,
    correction: str,
) -> None:
    """Both panes side by side (the page's reference corpus fits both corrections); each pane
    starts with ``correction``, so that a comparison of models compares one correction."""
    p1, p2 = st.columns(2)
    method = p1.selectbox("Projection", METHODS, key="explore_method",
                          help="Both panes use the same projection settings and seed.")  # fmt: skip
    seed = p2.number_input("random_state", 0, 2**31 - 1, key="explore_seed")  # default: 0
    config = ProjectionConfig(method=method, n_neighbors=10, random_state=int(seed))
    columns = st.columns(2, gap="medium")
    panes = [pane_widgets(name, col, correction, prefix="explore")
             for name, col in zip(PANES, columns)]  # fmt: skip
    for pane, col in zip(panes, columns):
        _pane(pane, col, sentences, text_key, word, places, query, reference, config)
