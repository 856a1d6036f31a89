"""Fine-tune.

Fine-tune the sidebar's model on a small job (a built-in task made from WordNet's usage examples,
which needs no download, or from SemCor; or your own files) with a live loss/metric chart, then
compare the tuned encoder with the base one.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import pandas as pd
import streamlit as st

import webapp.downloads
import webapp.feedback
import webapp.loaded_model
import webapp.settings
import webapp.sidebar
import webapp.urlstate
from webapp.caches import corpora, indexes
from webapp.offered_models import run_directory, runs_dir
from webapp.urlstate import Between, Param
from workbench.finetune import runs
from workbench.finetune.data import splits
from workbench.finetune.evaluation import compare as cmp
from workbench.finetune.evaluation.plots import TrainingLog, sense_clusters, training_figure
from workbench.finetune.tasks.registry import TASKS
from workbench.finetune.training.config import TrainConfig
from workbench.viz.export import ViewSettings
from workbench.viz.projection import ProjectionConfig

#: The jobs the page offers: built-in tasks (``workbench.finetune.data.splits.BUILTINS``) and the
#: visitor's own files, in the order shown.
BUILTIN = {
    "wic": "word in context · SemCor",
    "supersense": "supersenses · SemCor",
    "wordnet-wic": "word in context · WordNet",
    "wordnet-supersense": "supersenses · WordNet",
    "upload": "my own files",
}
#: What each job is, said under the choice.
ABOUT = {
    "wic": "Pairs of SemCor sentences that share a word: same sense or not (task pair; "
    "balanced, so chance is 50%). The words of dev and test are never in training.",
    "supersense": "SemCor's sense-annotated words tagged with their WordNet class "
    "(noun.person, verb.motion, ...) as BIO tags (task token).",
    "wordnet-wic": "Pairs of WordNet's usage examples of one word: the same synset or two of "
    "its synsets (task pair; balanced, so chance is 50%). The words of dev and test are never "
    "in training. Made from WordNet 3.0, which installs with the workbench: no download.",
    "wordnet-supersense": "Each WordNet usage example's illustrated word tagged with its WordNet "
    "class (noun.animal, verb.motion, ...), every other word O (task token; WordNet tags only "
    "that word). Made from WordNet 3.0, which installs with the workbench: no download.",
    "upload": "Your own CSV, TSV, JSONL or CoNLL files: the task says which (docs/finetune.md).",
}
#: The jobs that need the WSD data (SemCor): every built-in one but WordNet's.
NEEDS_SEMCOR = tuple(
    k for k in splits.BUILTINS if k in BUILTIN and k not in splits.OFFLINE_BUILTINS
)

#: What the page says where the WSD data is missing: the jobs that need it, and how to get it.
NEEDS_WSD_DATA = (
    "Not offered here: the SemCor jobs (word in context and supersense tagging made from "
    "SemCor, whose sentences are longer and every annotated word tagged) and the before/after "
    "comparison need the WSD data (SemCor and the evaluation sets), which is not on this "
    "machine. `workbench data download` fetches it (once; then reload this page). WordNet's "
    "jobs and your own files need no WSD data."
)
#: What pressing "Fine-tune" says when there is no training file.
NO_TRAINING_FILE = (
    "Nothing to train on yet: upload a training file above (and a dev file, for the dev "
    "scores and the baselines), then press “Fine-tune” again."
)

#: Every setting of the page (and the sidebar) in the URL: a link reopens the same job.
PARAMS = (
    *webapp.sidebar.SIDEBAR_PARAMS,
    Param("ft_source", "data", choices=tuple(BUILTIN)),
    Param("ft_kind", "task", choices=tuple(TASKS)),
    Param("ft_ntrain", "train", "int", choices=Between(32, 50_000)),
    Param("ft_ndev", "dev", "int", choices=Between(16, 5_000)),
    Param("ft_ntest", "test", "int", choices=Between(16, 5_000)),
    Param("ft_epochs", "epochs", "int", choices=Between(1, 20)),
    Param("ft_lr", "lr", "float", choices=Between(1e-6, 1e-2)),
    Param("ft_batch", "batch", "int", choices=Between(1, 256)),
    Param("ft_maxlen", "max_length", "int", choices=Between(16, 512)),
    Param("ft_freeze", "freeze", "int", choices=Between(0, 48)),
    Param("ft_lora", "lora", "int", choices=Between(0, 64)),
    Param("ft_llrd", "llrd", "float", choices=Between(0.1, 1.0)),
    Param("ft_seed", "seed", "int", choices=Between(0, 2**31 - 1)),
    Param("ft_baselines", "baselines", "bool"),
    Param("ft_out", "run"),
    Param("ft_cmp_geo", "cmp_sentences", "int", choices=Between(100, 5000)),
    Param("ft_cmp_wsd", "cmp_semcor", "int", choices=Between(500, 37_176)),
    Param("ft_cmp_test", "cmp_test", choices=tuple(indexes.EVAL_DATASETS)),
    Param("ft_lemma", "lemma"),
    Param("ft_layer", "layer"),
    Param("ft_limit", "limit", "int", choices=Between(20, 1000)),
)

st.title("Fine-tune an encoder")
st.caption(
    "A small job on this machine: the tuned encoder is saved as a model directory that every "
    "page (and `workbench`'s commands) can load. Large runs: `workbench finetune ...` on a GPU."
)
st.info(
    "What to expect: a few hundred examples train in minutes on a CPU and usually stay near the "
    "baselines (WiC's majority class is 50%): the baselines are scored beside the tuned model "
    "so the result says whether training helped. Thousands of examples and a GPU do better "
    "(docs/finetune.md).",
    icon=":material/info:",
)
webapp.urlstate.restore(PARAMS)
share = st.container()  # the "copy link" control, filled once the page's widgets are drawn
settings = webapp.settings.current()
has_semcor = "semcor" in corpora.available_datasets()
choices = [k for k in BUILTIN if has_semcor or k not in NEEDS_SEMCOR]
if st.session_state.get("ft_source") not in choices:  # a link's SemCor job on a machine without
    st.session_state["ft_source"] = choices[0]
#: Every widget's default through Session State only, so a link's values (restored there
#: before the widgets are drawn) never meet a second default (Streamlit warns of both).
for key, default in (
    ("ft_ntrain", 512), ("ft_ndev", 256), ("ft_ntest", 256), ("ft_epochs", 2), ("ft_lr", 5e-5),
    ("ft_batch", 16), ("ft_maxlen", 128), ("ft_freeze", 0), ("ft_lora", 0), ("ft_llrd", 1.0),
    ("ft_seed", 0), ("ft_baselines", True), ("ft_cmp_geo", 300), ("ft_cmp_wsd", 2000),
    ("ft_lemma", "bank"), ("ft_layer", "-1"), ("ft_limit", 200),
):  # fmt: skip
    st.session_state.setdefault(key, default)
picked = st.segmented_control("Data", choices, format_func=BUILTIN.get, key="ft_source")
source = picked or choices[0]
st.caption(ABOUT[source])
if not has_semcor:
    st.info(NEEDS_WSD_DATA, icon=":material/database:")

# ------------------------------------------------------------------ data
c1, c2, c3 = st.columns(3)
if source == "upload":
    kind = c1.selectbox(
        "Task", list(TASKS), format_func=lambda k: f"{k}: {TASKS[k].help}", key="ft_kind"
    )
    train_file = c2.file_uploader("Training file", key="ft_train")
    dev_file = c3.file_uploader("Dev file", key="ft_dev")
else:
    kind = splits.BUILTINS[source]
    n_train = c1.number_input("Training examples", 32, 50_000, step=64, key="ft_ntrain")
    n_dev = c2.number_input("Dev examples", 16, 5_000, step=32, key="ft_ndev")
    n_test = c3.number_input("Test examples", 16, 5_000, step=32, key="ft_ntest")

with st.expander("Training options", expanded=False):
    o1, o2, o3, o4 = st.columns(4)
    epochs = o1.number_input("Epochs", 1, 20, key="ft_epochs")
    lr = o2.number_input("Learning rate", 1e-6, 1e-2, format="%.0e", key="ft_lr")
    batch = o3.number_input("Batch size", 1, 256, key="ft_batch")
    max_length = o4.number_input("Max length (tokens)", 16, 512, key="ft_maxlen")
    p1, p2, p3, p4 = st.columns(4)
    freeze_layers = p1.number_input("Freeze lowest N layers", 0, 48, key="ft_freeze")
    lora_r = p2.number_input("LoRA rank (0: off)", 0, 64, key="ft_lora")
    decay = p3.number_input("Layer-wise LR decay", 0.1, 1.0, step=0.05, key="ft_llrd")
    seed = p4.number_input("Seed", 0, 2**31 - 1, key="ft_seed")
    baselines = st.checkbox(
        "Also score the majority class and frozen-feature probes (the baseline beside the "
        "tuned model)",
        key="ft_baselines",
        disabled=not TASKS[kind].baselines,
    )
auto_name = f"{source}-{kind}"  # the run's name follows the job until the visitor names it
if st.session_state.get("ft_out") in (None, st.session_state.get("ft_out_auto")):
    st.session_state["ft_out"] = auto_name
st.session_state["ft_out_auto"] = auto_name
run_name = st.text_input(
    "Run name", key="ft_out", max_chars=80,
    help=f"The model is saved in this app's runs folder ({runs_dir()}), under this name; a run "
    "of the same name is replaced. Every page can load it from there.",
)  # fmt: skip
uploaded = [f.name for f in (train_file, dev_file) if f is not None] if source == "upload" else []
shared: list[str] = []


def _share() -> None:
    """Draw the "copy link" control once, with the settings of the widgets drawn so far."""
    if not shared:
        what = f"this fine-tuning job ({BUILTIN[source]}, task {kind}) with its options"
        missing = [f"the uploaded file {name}" for name in uploaded]
        shared.append(webapp.urlstate.link_control(PARAMS, None, what, missing, area=share))


def _log_rows(log: TrainingLog, metric: str) -> list[dict]:
    """The training log as rows: one per batch (its loss), then one per epoch (train loss,
    every dev measure, seconds)."""
    rows: list[dict] = [
        {"row": "batch", "epoch_position": round(x, 6), "loss": loss} for x, loss in log.steps
    ]
    for e in log.epochs:
        row = {"row": "epoch", "epoch_position": e["epoch"], "train_loss": e.get("train_loss")}
        row.update({f"dev_{k}": v for k, v in (e.get("dev") or {}).items()})
        rows.append({**row, "seconds": e.get("seconds")})
    return rows


def _run_settings(card: dict, out_dir: str, view: str) -> ViewSettings:
    """What made the run's files: the base model, the task, its data and its options."""
    data = {"task": card.get("task"), "metric": card.get("metric"), "output": out_dir,
            "data": card.get("data"), "options": card.get("options"),
            "device": card.get("device")}  # fmt: skip
    return ViewSettings(view=view, model=str(card.get("base_model", "")), fingerprint="",
                        pooling=str((card.get("options") or {}).get("head_pooling", "")),
                        layer="all", data=data,
                        dtype=str(card.get("mixed_precision", "")))  # fmt: skip


def _data() -> splits.TaskData:
    if source != "upload":
        limits = (int(n_train), int(n_dev), int(n_test))  # the test set is cut too
        return splits.builtin_data(source, limits=limits, seed=int(seed))
    if train_file is None:
        st.info("Upload a training file (and a dev file) to fine-tune on your data.")
        _share()
        st.stop()
    uploads = [(f.name, f.getvalue()) for f in (train_file, dev_file) if f is not None]
    return splits.uploaded_data(kind, uploads[0], uploads[1] if len(uploads) > 1 else None)


def _figure(log: TrainingLog, metric: str):
    """The training chart: loss per batch, the dev metric per epoch on a 0-1 axis."""
    fig = training_figure(log, metric)
    fig.update_layout(
        xaxis=dict(dtick=1 if log.epochs and len(log.epochs) <= 20 else None, rangemode="tozero"),
        yaxis2=dict(range=[0, 1], tickformat=".1f", dtick=0.2),
    )
    return fig


# ------------------------------------------------------------------ train
go = st.button("Fine-tune", type="primary", key="ft_go")
if go and source == "upload" and train_file is None:  # said at once, not after "Preparing..."
    st.warning(NO_TRAINING_FILE, icon=":material/upload_file:")
    go = False
if go:
    cfg = TrainConfig(
        epochs=int(epochs),
        lr=float(lr),
        batch_size=int(batch),
        max_length=int(max_length),
        freeze_layers=int(freeze_layers),
        lora_r=int(lora_r),
        layer_lr_decay=float(decay),
        seed=int(seed),
        device=settings.device,
    )
    started = time.perf_counter()
    chart, status = st.empty(), st.empty()
    log, last, draws = TrainingLog(), [0.0], [0]
    metric = TASKS[kind].metric

    def live(event: dict) -> None:
        log.update(event)
        if event["event"] == "epoch" or time.monotonic() - last[0] > 1.0:
            last[0], draws[0] = time.monotonic(), draws[0] + 1
            chart.plotly_chart(
                _figure(log, metric),
                config=webapp.downloads.CHART_CONFIG,
                key=f"ft_live_{draws[0]}",
            )
        epoch, n_batches = event["epoch"], event.get("n_batches", 0)
        if event["event"] == "step" and event.get("batch") == n_batches:
            status.info(f"Epoch {epoch}/{cfg.epochs} trained: evaluating on the dev set…",
                        icon=":material/hourglass_top:")  # fmt: skip
        elif event["event"] == "step":
            status.caption(f"Epoch {epoch}/{cfg.epochs}, batch {event['batch']}/{n_batches}")
        elif epoch == cfg.epochs:
            then = "the test set" if data.test is not None else "saving the model"
            status.info(f"Training done: {then}…", icon=":material/hourglass_top:")

    with webapp.feedback.user_errors():
        output = run_directory(run_name)  # never outside the app's own runs folder
        reading = " (WordNet's examples: read once, some seconds)" * (
            source in splits.OFFLINE_BUILTINS
        )
        status.info(f"Preparing the data…{reading}", icon=":material/hourglass_top:")
        data = _data()
        card = runs.train_with_baselines(
            kind,
            data,
            cfg,
            output,
            model=settings.model,
            baselines=bool(baselines and TASKS[kind].baselines and data.dev is not None),
            say=lambda message: status.info(message, icon=":material/hourglass_top:"),
            overwrite=True,
            progress=False,
            callback=live,
        )
    chart.empty()  # the result below draws the final chart: one chart, not two
    status.empty()
    wall = time.perf_counter() - started
    st.session_state["ft_result"] = {"output": str(output), "card": card, "log": log, "wall": wall}
    st.session_state.pop("ft_compare", None)

done = st.session_state.get("ft_result")
if not done:
    _share()
    st.stop()
card, out_dir = done["card"], done["output"]
st.subheader("Result")
final = _figure(done["log"], card["metric"])
st.plotly_chart(final, config=webapp.downloads.CHART_CONFIG, key="ft_final_chart")
run_stem = f"finetune-{Path(out_dir).name}"
trained = _run_settings(card, out_dir, "finetune")
webapp.downloads.figure_buttons(final, trained, f"{run_stem}-training", "ft_final_fig")
st.caption("The training log: the loss of every batch and each epoch's dev measures.")
webapp.downloads.table_buttons(lambda: _log_rows(done["log"], card["metric"]), trained,
                               f"{run_stem}-log", "ft_log")  # fmt: skip
st.code(runs.summary({**card, "output": out_dir}), language=None)
st.caption(
    f"Wall time: {done['wall']:.0f} s from pressing “Fine-tune” to this result (data, training, "
    f"evaluation{', baselines' if card.get('baselines') else ''}); training alone "
    f"{card['train_seconds']:.0f} s."
)


def _use_model(path: str) -> None:
    st.session_state["model"] = path  # a callback runs before the sidebar widget is drawn


st.button(
    "Analyse the tuned model on every page (sets the sidebar's model)",
    key="ft_use",
    on_click=_use_model,
    args=(out_dir,),
)

# ------------------------------------------------------------------ before / after
st.subheader("Before / after")
if not has_semcor:
    st.info("The comparison needs the WSD data (SemCor and the evaluation sets): "
            "`workbench data download` fetches it.")  # fmt: skip
    _share()
    st.stop()
k1, k2, k3 = st.columns(3)
n_geo = k1.number_input("Geometry: sentences", 100, 5000, step=100, key="ft_cmp_geo")
n_wsd = k2.number_input("WSD: SemCor training sentences", 500, 37_176, step=500, key="ft_cmp_wsd")
test_set = k3.selectbox("WSD test set", indexes.EVAL_DATASETS, key="ft_cmp_test")
if st.button("Compare base and tuned", key="ft_cmp_go"):
    cfg = cmp.CompareConfig(
        geometry_sample=int(n_geo),
        wsd_train_sentences=int(n_wsd),
        wsd_test=test_set,
        device=settings.device,
    )
    with webapp.feedback.user_errors(), st.spinner("Measuring both models…"):
        st.session_state["ft_compare"] = cmp.compare_measure(settings.model, out_dir, cfg)
comparison = st.session_state.get("ft_compare")
if comparison is not None:
    aniso_fig, wsd_fig = cmp.compare_figures(comparison)
    f1, f2 = st.columns(2)
    compared = _run_settings(card, out_dir, "finetune-compare")
    f1.plotly_chart(aniso_fig, config=webapp.downloads.CHART_CONFIG, key="ft_cmp_aniso")
    webapp.downloads.figure_buttons(aniso_fig, compared, f"{run_stem}-anisotropy",
                                    "ft_cmp_aniso_fig", area=f1)  # fmt: skip
    f2.plotly_chart(wsd_fig, config=webapp.downloads.CHART_CONFIG, key="ft_cmp_wsd_fig")
    webapp.downloads.figure_buttons(wsd_fig, compared, f"{run_stem}-wsd", "ft_cmp_wsd_dl",
                                    area=f2)  # fmt: skip
    table = cmp.sweep_table(comparison)
    frame = pd.DataFrame(list(table.rows), columns=list(table.columns))
    st.dataframe(frame, hide_index=True, width="stretch")
    webapp.downloads.table_buttons(frame, compared, f"{run_stem}-before-after", "ft_cmp_table")

st.subheader("Sense clusters of a lemma, base vs tuned")
s1, s2, s3 = st.columns(3)
lemma = s1.text_input("Lemma", key="ft_lemma").strip().lower()
layer = s2.text_input("Layers", key="ft_layer").strip()
limit = s3.number_input("At most", 20, 1000, step=20, key="ft_limit")
_share()
if st.button("Draw", key="ft_draw"):
    with webapp.feedback.user_errors():
        occs = corpora.occurrences(
            "semcor", lemma, None, int(limit), _corpus=corpora.corpus("semcor")
        )
        encoders = {
            "base": webapp.loaded_model.encoder(),
            "tuned": webapp.loaded_model.encoder(dataclasses.replace(settings, model=out_dir)),
        }
        figs = sense_clusters(encoders, occs, layer, ProjectionConfig(method="pca"))
    g1, g2 = st.columns(2)
    g1.plotly_chart(figs["base"], config=webapp.downloads.CHART_CONFIG, key="ft_sc_base")
    g2.plotly_chart(figs["tuned"], config=webapp.downloads.CHART_CONFIG, key="ft_sc_tuned")
