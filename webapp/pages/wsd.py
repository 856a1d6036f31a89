"""WSD.

Word sense disambiguation by the nearest sense vector: the candidate senses of one word in a
sentence with their scores and where each score comes from, and an evaluation on the
framework's datasets with error browsing. The default index is the best measured system.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

import webapp.builds
import webapp.caches
import webapp.downloads
import webapp.state
import webapp.urlstate
from webapp.urlstate import Between, Param
from workbench.lexicon.wordnet import POS_TAGS
from workbench.viz import plotting
from workbench.wsd import report as wsd_report
from workbench.wsd.disambiguate import disambiguate
from workbench.wsd.systems import FEW_OCCURRENCES, SYSTEMS, WORDNET_SYSTEM

POS_CHOICES = (None, *POS_TAGS)
#: Every setting of the page (and the sidebar) in the URL: a link reopens the same view.
PARAMS = (
    *webapp.state.SIDEBAR_PARAMS,
    Param("wsd_index", "index"),
    Param("wsd_text", "sentence"),
    Param("wsd_word", "word"),
    Param("wsd_pos", "pos", "optional", choices=POS_CHOICES),
    Param("wsd_dataset", "dataset", choices=webapp.caches.EVAL_DATASETS),
    Param("wsd_n_sentences", "first", "int", choices=Between(0, 100_000)),
)

st.title("Word sense disambiguation")
st.caption(
    "Every WordNet sense of the word has a vector: the mean of its training occurrences in "
    "SemCor (a centroid), one propagated from related senses, or its gloss. The word's vector in "
    "your sentence is compared with the vectors of its candidate senses; the most similar one "
    "is chosen."
)
webapp.urlstate.restore(PARAMS)
share = st.container()  # the "copy link" control, filled once the widgets are drawn
settings = webapp.state.current()
enc = webapp.state.encoder(settings)  # the labels give the F1 measured for this model
systems = webapp.caches.system_options(enc.fingerprint, enc.dtype_name)
choices = {**{f"system:{k}": v for k, v in systems.items()}, **webapp.caches.saved_indexes()}
if st.session_state.get("wsd_index") not in choices:
    st.session_state.pop("wsd_index", None)  # a link's index this server does not have
index_label = st.selectbox(
    "Sense index", list(choices), key="wsd_index",
    format_func=lambda c: choices[c] if c.startswith("system:") else f"saved: {c}",
    help="The best measured system is the default. Indexes saved with `workbench wsd train "
    "--out` in the cache dir are listed too.",
)  # fmt: skip
system = index_label.removeprefix("system:") if index_label.startswith("system:") else None
index = None
if system is not None and system != WORDNET_SYSTEM.name:
    build = webapp.builds.settle(webapp.caches.system_index_build(system))
    if not build.done:

        @st.fragment(run_every=1.0)
        def _wait_for_the_index() -> None:
            if build.done:
                st.rerun()
            if build.message:
                st.info(build.message, icon=":material/hourglass_top:")
            st.progress(build.fraction,
                    text=f"{build.stage} {build.fraction:.0%}: {build.timing()}")  # fmt: skip

        _wait_for_the_index()
        webapp.urlstate.link_control(PARAMS, None, "this page with its settings", area=share)
        st.stop()
    if build.error is not None:
        with webapp.state.user_errors():
            raise build.error
    index = build.result
elif system is None:
    index = webapp.caches.sense_index(choices[index_label], settings.key)

one, evaluation = st.tabs(["One sentence", "Evaluation"])

# ------------------------------------------------------------------ one sentence
with one:
    c1, c2, c3 = st.columns([4, 1, 1])
    st.session_state.setdefault(
        "wsd_text", "He sat on the bank of the river and watched the boats."
    )
    st.session_state.setdefault("wsd_word", "bank")
    text = c1.text_input("Sentence", key="wsd_text", max_chars=2000)
    word = c2.text_input("Word", key="wsd_word", max_chars=100)
    pos = c3.selectbox("POS", POS_CHOICES, format_func=lambda p: p or "any", key="wsd_pos")

    def run_one():
        return disambiguate(
            enc, index, text, word.strip(), pos=pos, wordnet=webapp.caches.wordnet(),
            system=system or WORDNET_SYSTEM.name,
        )  # fmt: skip

    with webapp.state.user_errors():
        result = webapp.state.memo("wsd-one", 64).get(
            (settings.key, index_label, text, word.strip(), pos), run_one
        )
    best = result.best
    scored = [c for c in result.candidates if c.score == c.score]  # not NaN
    if not result.candidates:
        st.warning(
            f"“{result.words[result.target]}” has no WordNet sense"
            f"{f' as a {pos}' if pos else ''}: there is nothing to choose from. Try another word"
            f"{' or POS' if pos else ''}."
        )
    if result.note:
        st.warning(result.note, icon=":material/warning:")
    data = {"sentence": text, "word": word.strip(), "pos": pos, "index": index_label,
            "system": result.system, "config": str(result.config)}  # fmt: skip
    shown = webapp.state.view_settings("wsd-candidates", "", data=data)  # fmt: skip
    stem = f"wsd-{word.strip() or 'word'}"
    if scored:
        fig = plotting.candidate_bars(
            [c.key for c in scored], [c.score for c in scored], [c.gloss for c in scored],
            chosen=best.key if best else None,
            title=f"Candidate senses of “{result.words[result.target]}”",
        )  # fmt: skip
        st.plotly_chart(fig, key="wsd_bars")
        webapp.downloads.figure_buttons(fig, shown, stem, "wsd_bars_fig")
    if best is not None:
        how = best.evidence if scored else "no candidate has a vector: WordNet's first sense"
        st.success(f"**{best.key}** ({best.synset}): {best.gloss}  \n_score from: {how}_")
        if result.warning:
            st.warning(result.warning, icon=":material/warning:")
    first = result.first_sense
    if result.note and first is not None:
        st.info(f"**WordNet's first sense**, the back-off: **{first.key}** ({first.synset}): "
                f"{first.gloss}", icon=":material/undo:")  # fmt: skip
    if result.candidates:
        candidates = pd.DataFrame(
            [(c.key, c.pos, None if c.score != c.score else round(c.score, 4), c.evidence,
              c.gloss) for c in result.candidates],
            columns=["sense key", "POS", "score", "score from", "gloss"],
        )  # fmt: skip
        st.table(candidates.set_index("sense key").fillna({"score": "-"}))
        webapp.downloads.table_buttons(candidates, shown, f"{stem}-candidates", "wsd_table")
    st.caption(
        f"Index: {result.system} system, trained on {result.training.corpus} ({result.config}). "
        f"A sense with fewer than {FEW_OCCURRENCES} training occurrences is flagged when chosen."
    )
webapp.urlstate.link_control(PARAMS, None, "this sentence, word and index", area=share)

# ------------------------------------------------------------------ evaluation
with evaluation:
    found = webapp.caches.available_datasets()
    datasets = [d for d in webapp.caches.EVAL_DATASETS if d in found]
    if not datasets:
        st.info("No evaluation data here: `workbench data download` fetches it.")
        st.stop()
    d1, d2 = st.columns([2, 1])
    dataset = d1.selectbox("Dataset", datasets, key="wsd_dataset")
    n_sentences = int(d2.number_input("First sentences only (0 = all)", 0, 100_000, 0, step=50,
                                      key="wsd_n_sentences"))  # fmt: skip
    eval_key = (settings.key, index_label, dataset, n_sentences)
    name = system or "custom"
    memo = webapp.state.memo("wsd-eval", 8)
    if st.button("Run the evaluation", key="wsd_run", type="primary"):
        with webapp.state.user_errors():
            webapp.caches.wsd_evaluation(dataset, index_label, index, n_sentences)
    if eval_key not in memo:
        st.info("Choose a dataset and press “Run the evaluation” (a minute or two on a CPU).")
        st.stop()
    corpus, ev = memo.get(eval_key, lambda: None)
    known = SYSTEMS.get(name)
    st.caption(f"System: {name}{f' ({known.description})' if known else ''}.")
    table = wsd_report.dataset_table(ev)
    scores = pd.DataFrame(list(table.rows), columns=list(table.columns)).round(1)
    st.dataframe(scores, hide_index=True, width="stretch")
    st.caption(table.caption)
    evaluated = webapp.state.view_settings(
        "wsd-evaluation", "", data={"dataset": dataset, "first_sentences": n_sentences,
                                    "index": index_label, "system": name},
    )  # fmt: skip
    eval_stem = f"wsd-eval-{dataset}"
    webapp.downloads.table_buttons(scores, evaluated, eval_stem, "wsd_eval_table")
    eval_fig = wsd_report.dataset_figure(ev)
    st.plotly_chart(eval_fig, key="wsd_eval_fig")
    webapp.downloads.figure_buttons(eval_fig, evaluated, eval_stem, "wsd_eval_fig_dl")
    pos_t = wsd_report.pos_table(ev)
    by_pos = pd.DataFrame(list(pos_t.rows), columns=list(pos_t.columns)).round(1)
    st.dataframe(by_pos, hide_index=True, width="stretch")
    webapp.downloads.table_buttons(by_pos, evaluated, f"{eval_stem}-pos", "wsd_pos_table")

    st.subheader("Errors by lemma")
    if not ev.errors:
        st.success("No errors.")
        st.stop()
    lemma = st.selectbox(
        "Lemma (most errors first)", [e.lemma for e in ev.errors], key="wsd_error_lemma",
        format_func=lambda name: next(
            f"{e.lemma}: {e.n_wrong} wrong of {e.n_instances}" for e in ev.errors if e.lemma == name
        ),
    )  # fmt: skip
    errors = wsd_report.lemma_error_table(corpus, ev, lemma, webapp.caches.wordnet())
    st.table(pd.DataFrame(list(errors.rows), columns=list(errors.columns)))
