"""WSD.

Word sense disambiguation: the candidate senses of one word in a sentence, ranked, each with its
definition, its score and where the score comes from (a word that occurs twice: which one), and
an evaluation on the framework's datasets shown as the report the command line writes
(:func:`indexes.wsd_report`: F1 with 95% intervals and the baselines, the splits, the
errors in words with links that reopen them here, the downloads made by the report's writers),
optionally against a second system (deltas with paired p-values, the instances where they
differ). The default system is the WSD bi-encoder (shipped for the packaged model): it answers
at once, encoding only the glosses of the word's senses; the SemCor systems build their index in
the background the first time. Every system not offered for the model says why.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

import webapp.builds
import webapp.downloads
import webapp.feedback
import webapp.layout
import webapp.loaded_model
import webapp.memo
import webapp.report_view
import webapp.settings
import webapp.sidebar
import webapp.urlstate
from webapp.caches import corpora, indexes
from webapp.defaults import WSD_TEXT, WSD_WORD
from webapp.text import plain
from webapp.urlstate import Between, Param
from workbench.lexicon.wordnet import POS_TAGS
from workbench.reports.writers import to_html, to_json, to_markdown
from workbench.viz import plotting
from workbench.wsd.disambiguate import (
    count_in_sentence,
    disambiguate,
    in_sentence,
    likely_target,
)
from workbench.wsd.levers import levers_in_words
from workbench.wsd.presets import FEW_OCCURRENCES
from workbench.wsd.reporting.compare import compare_tables, comparison_report, saved_of
from workbench.wsd.reporting.files import csv_zip, report_texts
from workbench.wsd.reporting.links import WSD_PAGE
from workbench.wsd.systems import missing_systems
from workbench.wsd.systems.registry import SYSTEMS

POS_CHOICES = (None, *POS_TAGS)
#: Session key of the sentence of the previous run (a new sentence picks its likely word).
LAST_SENTENCE = "wsd_last_sentence"
#: The system: one this server offers for the model (``choices``, known once the model is);
#: older links name it "index", with a "system:" prefix on a system's name.
SYSTEM = Param("wsd_system", "system", formerly="index", choices=lambda: choices,
               upgrade=lambda v: v.removeprefix("system:"))  # fmt: skip
#: Every setting of the page (and the sidebar) in the URL: a link reopens the same view.
PARAMS = (
    *webapp.sidebar.SIDEBAR_PARAMS,
    SYSTEM,
    Param("wsd_text", "sentence"),
    Param("wsd_word", "word"),
    Param("wsd_occurrence", "occurrence", "int", choices=Between(1, 1000)),
    Param("wsd_pos", "pos", "optional", choices=POS_CHOICES),
    Param("wsd_dataset", "dataset", choices=indexes.EVAL_DATASETS),
    Param("wsd_n_sentences", "first", "int", choices=Between(0, 100_000)),
    Param("wsd_compare", "compare"),
)
#: The report's sections the Evaluation tab shows its own way (the errors: as sentences).
ERRORS = "Errors in words"

share = webapp.layout.header(
    "Word sense disambiguation",
    "The bi-encoder (the default) reads the word in your sentence with a trained context "
    "encoder and each WordNet sense's definition with a gloss encoder, and chooses the sense "
    "whose definition vector fits best: it can choose a sense it never saw in training, from "
    "its definition. The SemCor systems give each sense a vector from its training "
    "occurrences (a centroid), from related senses, or from its gloss, and choose the most "
    "similar one.",
)  # the "copy link" control, filled once the widgets are drawn
webapp.urlstate.restore([p for p in PARAMS if p is not SYSTEM])
settings = webapp.settings.current()
enc = webapp.loaded_model.encoder(settings)  # the labels give the F1 measured for this model
with st.spinner("Finding the WSD systems for this model…"):  # a new model: its fingerprint
    choices = {
        **indexes.system_options(settings.model, enc.fingerprint, enc.dtype_name),
        **{name: f"saved: {name}" for name in indexes.saved_indexes()},
    }
    missing = missing_systems(settings.model)
webapp.urlstate.restore([SYSTEM])  # a link's system this server lacks: a note names it
if st.session_state.get("wsd_system") not in choices:
    st.session_state.pop("wsd_system", None)  # the model changed: its default system
system = st.selectbox(
    "System", list(choices), key="wsd_system", format_func=choices.__getitem__,
    help="The bi-encoder is the default where the model has one (the packaged model ships "
    "with one). Indexes saved with `workbench wsd train --out` in the cache dir are listed too.",
)  # fmt: skip
if missing:  # every system not offered says why, one line each
    st.caption(
        "  \n".join(f"Not offered: **{SYSTEMS[n].label}**: {plain(why)}." for n, why in
                     missing.items())
    )  # fmt: skip
opened = indexes.wsd_system(system, settings)
if opened.builds_ahead:  # a SemCor system's index: loaded, or built once in the background
    build = webapp.builds.settle(indexes.system_index_build(system, opened))
    webapp.builds.show_progress(
        build,
        lambda: webapp.urlstate.link_control(
            PARAMS, None, "this page with its settings", area=share
        ),
    )
    if build.error is not None:
        with webapp.feedback.user_errors():
            raise build.error

one, evaluation = st.tabs(["One sentence", "Evaluation"])


# ------------------------------------------------------------------ one sentence
@webapp.layout.fragment
def one_sentence() -> None:
    """The sentence, the word, its POS and the answer, and the page's link: these controls
    rerun this alone (the system, the sidebar and the Evaluation tab are the page's last full
    run's)."""
    c1, c2, c3 = st.columns([4, 1, 1])
    st.session_state.setdefault("wsd_text", WSD_TEXT)
    st.session_state.setdefault("wsd_word", WSD_WORD)
    text = c1.text_input("Sentence", key="wsd_text", max_chars=2000)
    # a new sentence without the word: its likely target instead of "not a word of the sentence"
    last = st.session_state.get(LAST_SENTENCE)
    st.session_state[LAST_SENTENCE] = text
    picked = None
    if last is not None and text != last and text.strip():
        if not in_sentence(text, str(st.session_state.get("wsd_word", "")).strip()):
            picked = likely_target(text, corpora.wordnet())
            if picked is not None:
                st.session_state["wsd_word"] = picked
    word = c2.text_input("Word", key="wsd_word", max_chars=100)
    pos = c3.selectbox("POS", POS_CHOICES, format_func=lambda p: p or "any", key="wsd_pos")
    if picked is not None:
        st.caption(f"Word: “{plain(picked)}”, picked from the new sentence (its most ambiguous "
                   "noun, else verb, ...); type another word to change it.")  # fmt: skip
    times = count_in_sentence(text, word.strip())
    occurrence = 1
    if times > 1:  # which of its occurrences (a report's error link names it)
        st.session_state["wsd_occurrence"] = min(st.session_state.get("wsd_occurrence", 1), times)
        occurrence = int(st.number_input(
            f"Which “{word.strip()}” (it occurs {times} times)", 1, times, key="wsd_occurrence"
        ))  # fmt: skip
    else:
        st.session_state.pop("wsd_occurrence", None)

    def run_one():
        return disambiguate(opened, text, word.strip(), pos=pos, wordnet=corpora.wordnet(),
                            occurrence=occurrence)  # fmt: skip

    with webapp.feedback.user_errors(), st.spinner("Disambiguating…"):
        result = webapp.memo.memo("wsd-one", 64).get(
            (settings.key, system, text, word.strip(), pos, occurrence), run_one
        )
    best = result.best
    answered_by = SYSTEMS.get(result.system)  # None: settings of its own, a saved index's
    by_biencoder = answered_by is not None and answered_by.is_biencoder
    scored = [c for c in result.candidates if c.score == c.score]  # not NaN
    if not result.candidates:
        st.warning(
            f"“{plain(result.words[result.target])}” has no WordNet sense"
            f"{f' as a {pos}' if pos else ''}: there is nothing to choose from. Try another word"
            f"{' or POS' if pos else ''}."
        )
    if result.note:
        st.warning(plain(result.note), icon=":material/warning:")
    data = {"sentence": text, "word": word.strip(), "pos": pos, "system": system,
            "answered_by": result.system, "config": str(result.config)}  # fmt: skip
    shown = webapp.downloads.view_settings("wsd-candidates", "", data=data)  # fmt: skip
    stem = f"wsd-{word.strip() or 'word'}"
    read_as, probability = result.predicted_pos
    # with no POS given, the answer is the best sense of the POS the probe read: the others
    # are set aside (scored in the chart, never chosen), and the chart says so
    aside = [c for c in scored if read_as and c.pos != read_as]
    target_word = result.words[result.target]
    reason = f"set aside: not {read_as} (the word reads as {read_as}, p={probability:.2f})"
    if scored:
        fig = plotting.candidate_bars(
            [c.key for c in scored], [c.score for c in scored], [c.gloss for c in scored],
            chosen=best.key if best else None,
            title=f"Candidate senses of “{target_word}”",
            x_title="the word's vector · the sense's gloss vector"
            if by_biencoder
            else "cosine similarity to the sense's vector",
            set_aside=[c.key for c in aside], set_aside_reason=reason,
        )  # fmt: skip
        st.plotly_chart(fig, config=webapp.downloads.CHART_CONFIG, key="wsd_bars")
    if aside:
        kinds = sorted({c.pos for c in aside})
        st.caption(
            f"No POS given: the word's vector reads as {read_as} (probability "
            f"{probability:.2f}), so the answer is the best {read_as} sense. The "
            f"{len(aside)} {'/'.join(kinds)} sense{'s' * (len(aside) != 1)} (grey, hatched, "
            f"last) {'were' if len(aside) != 1 else 'was'} set aside before choosing, "
            f"whatever {'their' if len(aside) != 1 else 'its'} score: "
            + ", ".join(plain(c.key) for c in aside[:6]) + ("…" * (len(aside) > 6))
            + f". Choose POS {kinds[0]} to let {'them' if len(aside) != 1 else 'it'} compete."
        )  # fmt: skip
    elif read_as:
        st.caption(f"No POS given: the word's vector reads as {read_as} (probability "
                   f"{probability:.2f}); the answer is the best of its senses.")  # fmt: skip
    if scored:
        webapp.downloads.figure_buttons(fig, shown, stem, "wsd_bars_fig")
    if best is not None:
        how = best.evidence if scored else "no candidate has a vector: WordNet's first sense"
        st.success(f"**{plain(best.key)}** ({plain(best.synset)}): {plain(best.gloss)}  \n"
                   f"_score from: {plain(how)}_")  # fmt: skip
        if result.warning:
            st.warning(plain(result.warning), icon=":material/warning:")
    first = result.first_sense
    if result.note and first is not None:
        st.info(f"**WordNet's first sense**, the back-off: **{plain(first.key)}** "
                f"({plain(first.synset)}): {plain(first.gloss)}",
                icon=":material/undo:")  # fmt: skip
    if result.candidates:
        candidates = pd.DataFrame(
            [(c.key, c.pos, None if c.score != c.score else round(c.score, 4), c.evidence,
              c.gloss) for c in result.candidates],
            columns=["sense key", "POS", "score", "score from", "gloss"],
        )  # fmt: skip
        st.table(candidates.set_index("sense key").fillna({"score": "-"}))
        webapp.downloads.table_buttons(candidates, shown, f"{stem}-candidates", "wsd_table")
    if by_biencoder:
        model = plain(opened.biencoder.name) if opened.biencoder else ""
        st.caption(
            f"System: the WSD bi-encoder {model}, trained on {plain(result.training.corpus)}. "
            "A score is the dot product of the word's vector (over its length) and the sense's "
            f"definition vector{levers_in_words(opened.levers)}; “seen N× in training” says how "
            "often the sense occurred in its training data: an unseen sense is chosen from its "
            "definition alone."
        )
    else:
        st.caption(
            f"Index: {plain(result.system)} system, trained on {plain(result.training.corpus)} "
            f"({plain(result.config)}). A sense with fewer than {FEW_OCCURRENCES} training "
            "occurrences is flagged when chosen."
        )
    webapp.urlstate.link_control(PARAMS, None, "this sentence, word and system", area=share)


with one:
    one_sentence()

# ------------------------------------------------------------------ evaluation
with evaluation:
    found = corpora.available_datasets()
    datasets = [d for d in indexes.EVAL_DATASETS if d in found]
    if not datasets:
        st.info("No evaluation data here: `workbench data download` fetches it.")
        st.stop()
    d1, d2, d3 = st.columns([2, 1, 2])
    dataset = d1.selectbox("Dataset", datasets, key="wsd_dataset")
    n_sentences = int(d2.number_input("First sentences only (0 = all)", 0, 100_000, 0, step=50,
                                      key="wsd_n_sentences"))  # fmt: skip
    others = [c for c in choices if c != system]
    if st.session_state.get("wsd_compare") not in (None, *others):
        st.session_state.pop("wsd_compare")  # the system itself, or one not offered here
    other = d3.selectbox(
        "Compare with", [None, *others], key="wsd_compare",
        format_func=lambda c: "no other system" if c is None else choices[c],
        help="Run a second system on the same data: per-dataset and per-split deltas with "
        "paired-bootstrap p-values, and the instances where the two differ (as `workbench wsd "
        "compare` does).",
    )  # fmt: skip
    here = webapp.urlstate.app_url(WSD_PAGE)  # the errors' links open this server's WSD page
    runs = [(system, opened)] + ([(other, indexes.wsd_system(other, settings))]
                                 if other else [])  # fmt: skip
    memo = webapp.memo.memo("wsd-report", 8)
    keys = [(settings.key, name, dataset, n_sentences, here) for name, _ in runs]
    if st.button("Run the evaluation", key="wsd_run", type="primary"):
        with webapp.feedback.user_errors():
            for name, system_opened in runs:
                indexes.wsd_report(dataset, name, system_opened, n_sentences, here)
    if keys[0] not in memo:
        st.info("Choose a dataset and press “Run the evaluation” (a few seconds for the "
                "bi-encoder on ALL, a minute or two the first time on a CPU).")  # fmt: skip
        st.stop()
    doc = indexes.wsd_report(dataset, system, opened, n_sentences, here)
    stem = f"wsd-{dataset}" + (f"-first{n_sentences}" if n_sentences else "")

    def texts(doc=doc, stem=stem, key=keys[0]):
        return webapp.memo.memo("wsd-report-files", 4).get(key, lambda: report_texts(doc, stem))

    st.markdown(f"#### {plain(doc.report.title)}")
    webapp.downloads.report_buttons(texts, lambda: csv_zip(texts()), stem, "wsd_report_dl")
    webapp.report_view.show_report(doc.report, "wsd_report", open_sections=2, skip=(ERRORS,))

    st.subheader("Errors in words")
    errors = doc.errors or {}
    lemmas, sample = st.tabs(["The lemmas with most errors", "A sample of all errors"])
    with lemmas:
        webapp.report_view.show_errors(errors.get("by_lemma", ()))
    with sample:
        webapp.report_view.show_errors(errors.get("sample", ()))

    if other and keys[1] in memo:
        other_doc = indexes.wsd_report(dataset, other, runs[1][1], n_sentences, here)
        a, b = saved_of(doc), saved_of(other_doc)
        with webapp.feedback.user_errors(), st.spinner("Comparing: a paired bootstrap per group…"):
            cmp = webapp.memo.memo("wsd-compare", 4).get(
                (keys[0], keys[1]), lambda: compare_tables(a.table, b.table, a.corpus)
            )
        compared = comparison_report(cmp, a, b)
        st.subheader(f"{system} (A) against {other} (B)")
        cstem = f"wsd-compare-{system}-{other}-{dataset}"
        c1, c2, c3 = st.columns(3)
        for column, (label, fmt, make) in zip((c1, c2, c3), (
            ("HTML", "html", lambda: to_html(compared, compressed=True)),
            ("Markdown", "md", lambda: to_markdown(compared)),
            ("JSON", "json", lambda: to_json(compared)),
        )):  # fmt: skip
            column.download_button(label, make, f"{cstem}.{fmt}", key=f"wsd_compare_{fmt}",
                                   on_click="ignore", icon=":material/download:")  # fmt: skip
        webapp.report_view.show_report(compared, "wsd_compare", open_sections=2)
    elif other:
        st.info(f"Press “Run the evaluation” to run {other} too and compare the two.")
