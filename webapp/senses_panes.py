"""The Senses page's comparison views: two panes side by side, the separation of the senses on
screen, and several words in one map.

* Side by side: each pane has its own model (the sidebar's, the packaged one, all-mpnet-base-v2
  when fetched, any fine-tuned model directory, or a typed id / path), layer (or layer
  combination) and correction; both show the same occurrences, each pane projected with the same
  settings and seed. A fine-tuned model in one pane and its base model in the other is the
  fine-tuning before/after view.
* Under each plot: the silhouette of the gold senses and leave-one-out 1-NN sense accuracy
  (:mod:`workbench.geometry.separation`), and a curve of both over every layer.
* Several words: their occurrences in one projection, coloured by word, then by sense.

Every figure and table has download buttons (:mod:`webapp.downloads`); every widget's value is
in the URL (:data:`SENSES_PANE_PARAMS`, :mod:`webapp.urlstate`). The pane itself (its choices
and selectors) is :mod:`webapp.panes`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from typing import Any

import streamlit as st

import webapp.downloads
import webapp.feedback
import webapp.settings
import webapp.text
from webapp.caches import corpora, encodings, figures
from webapp.panes import PANES, Pane, pane_params, pane_settings, pane_widgets
from webapp.text import plain
from webapp.urlstate import Param
from workbench.corpora import occurrences as occ
from workbench.corpora.occurrences import Occurrence, OccurrenceVectors
from workbench.errors import InputError
from workbench.geometry.corrections import CORRECTION_LABELS
from workbench.viz.export import ViewSettings
from workbench.viz.neighbours import NeighbourIndex, snippet
from workbench.viz.plotting import ring_points, selected_rows
from workbench.viz.projection import ProjectionConfig
from workbench.viz.sense_figures import (
    sense_view_figure,
    separation_figure,
    separation_text,
    view_hover,
    words_figure,
)
from workbench.viz.sense_views import SenseView

#: The several-words view's layouts, the default first.
WORDS_LAYOUTS = ("each word apart", "all together")

#: The Senses page's comparison widgets in the URL; the page adds its own.
SENSES_PANE_PARAMS = (
    *pane_params("senses"),
    Param("senses_compare", "compare", "bool"),
    Param("senses_reference", "reference", upgrade=corpora.reference_name),
    Param("senses_words", "words"),
    Param("senses_words_layout", "words_layout", choices=WORDS_LAYOUTS, formerly="atlas_layout"),
)


def render_view(
    pane: Pane,
    found: Sequence[Occurrence],
    occ_key: tuple,
    config: ProjectionConfig | None,
    reference: str,
    data: dict,
) -> tuple[OccurrenceVectors, SenseView]:
    """Encode the occurrences with the pane's model and compute its view (cached)."""
    settings = pane_settings(pane)
    ov = encodings.encode_occurrences(occ_key, found, settings=settings)
    with webapp.feedback.user_errors():
        post = encodings.reference_correction(settings, reference, pane.correction)
        key = (settings.key, occ_key, pane.correction, reference if post is not None else "")
        view = figures.sense_view(key, ov, pane.layer, post, config, reference, data)
    return ov, view


def separation_line(view: SenseView) -> str:
    """The separation under a plot, raw beside the correction."""
    line = f"**Separation at layers {view.layer}**: {separation_text(view.separation)}"
    if view.correction != "none":
        raw = view.raw
        line += (
            f"  \n(raw: silhouette {raw.silhouette:.2f}, 1-NN {100 * raw.nn_accuracy:.0f}%)"
            if raw.n_measured
            else ""
        )
    skipped = [f"{plain(s.label)} ({s.n})" for s in view.separation.senses if not s.measured]
    if skipped:
        line += f"  \nLeft out (fewer than 2 occurrences): {', '.join(skipped)}"
    return line


def view_table(view: SenseView, glosses: dict[str, str]) -> Any:
    """The occurrences with their coordinates (a DataFrame)."""
    coords = view.coords if view.coords.shape[1] else None
    return occ.occurrence_table(view.occurrences, glosses, coords)


def curve_section(views: dict[str, SenseView], stem: str, key: str) -> None:
    """Separation over every layer for each named view, its figure and its downloads."""
    curves = {name: v.curve for name, v in views.items()}
    fig = separation_figure(curves, title="Sense separation at every layer")
    st.plotly_chart(fig, config=webapp.downloads.CHART_CONFIG, key=f"{key}_chart")
    records = [{"view": name, **r} for name, v in views.items() for r in v.curve.records()]
    settings = [replace(v.settings, view="separation", layer="all") for v in views.values()]
    webapp.downloads.figure_and_table(fig, records, settings, f"{stem}-separation", key)


def compare(
    found: Sequence[Occurrence],
    occ_key: tuple,
    config: ProjectionConfig,
    lemma: str,
    data: dict,
    layer: str,
) -> None:
    """Two panes side by side, then both separation curves (:func:`folded_curve`). Both panes
    start alike (``layer``,
    raw vectors: the one-pane view's), so that a comparison of models compares one layer and
    one correction until the visitor changes a pane."""
    reference = st.selectbox(
        "Reference corpus for the corrections", corpora.reference_options(),
        key="senses_reference", format_func=corpora.REFERENCE_LABELS.get,
        help="Each pane's correction is fitted per layer on this corpus, encoded by its model.",
    )  # fmt: skip
    columns = st.columns(2, gap="medium")
    panes = [pane_widgets(name, col, "none", default_layer=layer)
             for name, col in zip(PANES, columns)]  # fmt: skip
    gold = [o.label or "(no label)" for o in found]
    categories = sorted(set(gold))
    glosses = corpora.glosses(tuple(dict.fromkeys(gold)))
    names = occ.sense_names(glosses)
    views: dict[str, SenseView] = {}
    for pane, col in zip(panes, columns):
        with webapp.feedback.waiting(
            f"Pane {pane.name.upper()}: encoding the occurrences, fitting its correction, "
            "projecting…"
        ):
            _, view = render_view(pane, found, occ_key, config, reference, data)
        model = webapp.text.short(str(view.settings.model), 40)
        views[f"{pane.name.upper()}: {model}"] = view  # the curve adds raw / the correction
        title = f"{pane.name.upper()}: “{lemma}”, layers {pane.layer}, " + str(
            CORRECTION_LABELS[pane.correction]
        )  # the model is named in the pane's own selector above
        fig = sense_view_figure(view, hover=view_hover(view, glosses), names=names,
                                title=title, categories=categories)  # fmt: skip
        fig.update_layout(
            height=640,
            legend=dict(orientation="h", yanchor="top", y=-0.02, x=0),
            title=dict(font=dict(size=14)),
        )  # half the page: a smaller title
        col.plotly_chart(fig, config=webapp.downloads.CHART_CONFIG, key=f"senses_{pane.name}_chart")
        col.markdown(separation_line(view))
        stem = f"senses-{lemma}-{pane.name}-{pane.layer}-{pane.correction}"
        webapp.downloads.figure_and_table(fig, partial(view_table, view, glosses), view.settings,
                                          stem, f"senses_{pane.name}", col)  # fmt: skip
    folded_curve(views, f"senses-{lemma}")


def folded_curve(views: dict[str, SenseView], stem: str) -> None:
    """:func:`curve_section` in a folded section, drawn only while it is open (a folded chart
    is drawn by the browser all the same, on every rerun); one section for one pane and for
    two, so it stays open or folded across the side-by-side toggle."""
    curve = st.expander("Separation at every layer", key="senses_curve_open", on_change="rerun")
    if curve.open:
        with curve:
            curve_section(views, stem, "senses_curve")


def single_separation(view: SenseView, lemma: str) -> None:
    """The separation under the one-pane plot, and its curve over every layer
    (:func:`folded_curve`)."""
    st.markdown(separation_line(view))
    folded_curve({view.settings.model: view}, f"senses-{lemma}")


def words(
    source: str,
    pos: str | None,
    limit: int | None,
    layer: str,
    config: ProjectionConfig,
) -> None:
    """Several words' occurrences in one projection, coloured by word, then by sense."""
    if source == "upload":
        st.info("Several words come from SemCor, WordNet or the demo texts: choose one of them.")
        st.stop()
    default = ", ".join(occ.demo_words()) if source == "demo" else "bank, plant, bass"
    st.session_state.setdefault("senses_words", default)
    text = st.text_input("Words (comma-separated lemmas)", key="senses_words")
    words = list(dict.fromkeys(w.strip().lower() for w in text.split(",") if w.strip()))
    if not words:
        st.info("Type the words to see together, e.g. bank, plant, bass.")
        st.stop()
    corpus = corpora.corpus("semcor") if source == "semcor" else None
    parts = []
    with webapp.feedback.user_errors():
        if len(words) > 12:
            raise InputError(f"at most 12 words in one map, got {len(words)}")
        if source == "demo":
            missing = [w for w in words if w not in occ.demo_words()]
            if missing:
                better = "SemCor" if "semcor" in corpora.available_datasets() else "WordNet"
                raise InputError(
                    f"{', '.join(missing)}: not among the demo words "
                    f"({', '.join(occ.demo_words())}); choose {better} as the source above to "
                    "see any word"
                )
        for word in words:
            found = corpora.occurrences(source, word, pos, limit, _corpus=corpus)
            key = (source, word, pos, limit, "")
            parts.append((word, encodings.encode_occurrences(key, found)))
    settings = webapp.settings.current()
    st.session_state.setdefault("senses_words_layout", WORDS_LAYOUTS[0])  # a link's, else this
    layout = st.segmented_control(
        "Projection", WORDS_LAYOUTS, key="senses_words_layout",
        required=True,
        help="each word apart: one projection per word, side by side (its senses spread "
        "out); all together: one projection of every occurrence (the words apart, each a blob)",
    ) or WORDS_LAYOUTS[0]  # fmt: skip
    apart = layout == WORDS_LAYOUTS[0]
    data = {"lemmas": words, "source": source, "pos": pos, "limit": limit, "layout": layout}
    with (
        webapp.feedback.user_errors(),
        webapp.feedback.waiting(f"Projecting the occurrences of {len(words)} words…"),
    ):
        view = figures.words_view((settings.key, source, pos, limit, tuple(words)),
                                  tuple(parts), layer, config, data, apart)  # fmt: skip
    labels = [o.label for o in view.occurrences]
    glosses = corpora.glosses(tuple(dict.fromkeys(labels)))
    fig = words_figure(view, view_hover(view, glosses), occ.sense_names(glosses),
                       title=f"{', '.join(words)} at layers {layer}")  # fmt: skip
    st.plotly_chart(fig, config=webapp.downloads.CHART_CONFIG, key="senses_words_chart")
    st.caption(
        " · ".join(f"**{plain(w)}** {separation_text(s)}" for w, s in view.separation.items())
        + f" ({plain(settings.model or 'packaged model')}, raw vectors at layers {layer})"
    )
    table = occ.occurrence_table(view.occurrences, glosses, view.coords)
    table.insert(0, "lemma", list(view.lemmas), allow_duplicates=True)
    stem = f"senses-{'-'.join(words[:4])}-{layer}"
    webapp.downloads.figure_and_table(fig, table, view.settings, stem, "senses_words")


def single_settings(
    ov: OccurrenceVectors, layer: str, config: ProjectionConfig | None, data: dict
) -> ViewSettings:
    """The settings of the one-pane view (raw vectors)."""
    return ViewSettings.of(ov.emb, "senses", layer, "none", "", config, data)


def explore_map(
    fig: Any,
    coords: Any,
    ov: OccurrenceVectors,
    layer: str,
    labels: Sequence[str],
    key: str,
    find_area: Any = None,
) -> None:
    """A 2-D occurrence map a visitor can question: find the occurrences whose sentence holds
    a word (ringed; its box drawn in ``find_area``, default the page), click a point to ring and
    list its nearest occurrences at ``layer`` (by cosine, in the full vectors, not the
    projection), or draw a box or a lasso to list the sentences of a group."""
    search = (find_area if find_area is not None else st).text_input(
        "Find in the map", key=f"{key}_find", max_chars=100, placeholder="a word of the sentences",
        help="Rings the occurrences whose sentence holds this word. Click a point for its "
        "nearest neighbours; draw a box or a lasso (the plot's toolbar) to read a group.",
    ).strip().lower()  # fmt: skip
    found = [i for i, o in enumerate(ov.occurrences) if search and search in
             (w.lower() for w in o.words)] if search else []  # fmt: skip
    picked = st.session_state.get(f"{key}_chart")
    rows = selected_rows(picked)
    neighbours: list[tuple[int, float]] = []
    if len(rows) == 1 and coords.shape[1] == 2:
        vectors = ov.emb.select(layer)
        scores, near = NeighbourIndex().fit(vectors).search(vectors[rows[0]], k=10,
                                                            exclude=rows)  # fmt: skip
        neighbours = [(int(r), float(c)) for r, c in zip(near, scores)]
        ring_points(fig, coords, [r for r, _ in neighbours], "nearest to the clicked point")
    if found:
        ring_points(fig, coords, found, f"sentences with “{search}”")
    if coords.shape[1] == 2:
        fig.update_layout(dragmode="lasso" if len(ov.occurrences) > 50 else "zoom")
    st.plotly_chart(fig, config=webapp.downloads.CHART_CONFIG, key=f"{key}_chart",
                    on_select="rerun", selection_mode=("points", "box", "lasso"))  # fmt: skip
    if search:
        st.caption(
            f"“{plain(search)}”: in {len(found)} of {len(ov.occurrences)} sentences, ringed."
        )
    shown = [(r, None) for r in rows] if len(rows) != 1 else [(rows[0], 1.0), *neighbours]
    if shown:
        what = ("the clicked occurrence and its nearest at layers " + layer) if len(rows) == 1 \
            else f"{len(rows)} selected occurrences"  # fmt: skip
        st.markdown(f"**{what}**")
        table = [{"sense": labels[r], "cosine": None if c is None else round(c, 3),
                  "sentence": snippet(ov.occurrences[r].words, ov.occurrences[r].index, 15)}
                 for r, c in shown]  # fmt: skip
        st.table(table)
