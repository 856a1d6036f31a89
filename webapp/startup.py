"""What the app's server loads before the first visitor: the packaged model, WordNet, every
page's default view (Explore's neighbours, Geometry's table, Senses' default word, the demo
corpus map, WSD's default answer) in the order a visitor meets the pages, and UMAP's compiled
code, in one background thread started when the server starts.

``app.py`` declares ``st.App`` with :func:`lifespan`: Streamlit's server runs it before it
accepts connections, and it only starts the thread, so the health check answers at once and the
work goes on while the server waits for a browser. Every step warms the very cache entries the
pages use (``st.cache_resource`` / the memo of :mod:`webapp.state`), so a page opened after a
step finished draws from warm state; a page opened before waits on the same entry, never
computing anything twice. A step that fails is recorded, logged, and shown as an in-page
message by :func:`show_failures`; it never stops the server, and the page that needs the
resource tries again and reports its own error.

Adding a resource is one line in :data:`STEPS` (a name and a function of no argument).

The server also answers ``GET /_workbench/preload`` with every step's state (JSON).

Example::

    app = st.App("app.py", lifespan=webapp.startup.lifespan, routes=webapp.startup.routes())
    webapp.startup.show_failures()                              # on a page
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import streamlit as st

import webapp.caches
import webapp.state
from webapp.defaults import EXPLORE_TEXT, GEOMETRY_PAIRS, GEOMETRY_SAMPLE, WSD_TEXT, WSD_WORD
from webapp.panes import CORRECTIONS
from webapp.state import Settings
from workbench.corpora.occurrences import demo_words
from workbench.encoding.alignment import split_words
from workbench.geometry.analysis import GeometryConfig
from workbench.viz.corpus_map import CorpusMapConfig
from workbench.viz.neighbours import PoolPart, split_sentences
from workbench.viz.projection import ProjectionConfig, Projector
from workbench.wsd.disambiguate import target_lemmas

log = logging.getLogger("workbench.app")
#: Streamlit warns of every cached call made outside a visitor's script run ("missing
#: ScriptRunContext"), which is what a preload is: those warnings say nothing here.
logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").setLevel(logging.ERROR)


@dataclass
class Step:
    """One thing loaded at server start, and how it went.

    Attributes:
        name: what it loads, in words ("the packaged model").
        state: ``waiting``, ``running``, ``done`` or ``failed``.
        seconds: how long it took (``done`` or ``failed``).
        error: the exception's one-line text when it failed.
    """

    name: str
    state: str = "waiting"
    seconds: float = 0.0
    error: str = ""


def _model() -> None:
    webapp.state.encoder_for(Settings())


def _faiss() -> None:
    import faiss  # noqa: F401 - the first page searches with it right after the model


def _wordnet() -> None:
    webapp.caches.wordnet()


def _datasets() -> None:
    webapp.caches.available_datasets()


def _explore_view() -> None:
    """The Explore page's default view: its text, the demo reference corpus, the z-score fit."""
    settings = Settings()
    sentences = split_sentences(EXPLORE_TEXT)
    text_key = webapp.caches.text_key(EXPLORE_TEXT)
    emb = webapp.caches.warm_words(("text", text_key), sentences, settings)
    reference = webapp.caches.DEMO_REFERENCE
    ref = webapp.caches.reference_sentences(reference)
    ref_emb = webapp.caches.warm_words(("reference", reference, len(ref)), ref, settings)
    webapp.caches.fitted_correction((settings.key, reference), "zscore", ref_emb.vectors)
    parts = (PoolPart("reference", ref, ref_emb), PoolPart("your text", sentences, emb))
    key = (settings.key, settings.layers, reference, text_key, False)
    webapp.caches.neighbour_pool(key, parts, None, settings.layers)


def _senses_view() -> None:
    """The Senses page's default view: the first demo word's occurrences, encoded."""
    settings, word = Settings(), demo_words()[0]
    found = webapp.caches.occurrences("demo", word, None, None, None, "upload", _corpus=None)
    occ_key = ("demo", word, None, None, "")
    emb = webapp.caches.warm_occurrences(occ_key, found, settings)
    config = ProjectionConfig(method="umap", n_components=2, n_neighbors=15, min_dist=0.1,
                              random_state=0)  # fmt: skip
    webapp.caches.projection(((settings.key, occ_key), settings.layers),
                             emb.select(settings.layers), config)  # fmt: skip


def _geometry_view() -> None:
    """The Geometry page's default view: its default corpus and sample, encoded, and every
    layer measured under every correction (the page's table and figures)."""
    settings = Settings()
    reference = webapp.caches.reference_options()[0]
    sentences = webapp.caches.reference_sentences(reference, GEOMETRY_SAMPLE)
    key = ("reference", reference, len(sentences))
    emb = webapp.caches.warm_words(key, sentences, settings)
    config = GeometryConfig(n_pairs=GEOMETRY_PAIRS)
    webapp.caches.geometry((settings.key, reference, len(sentences)), emb, config)


def _corpus_map_view() -> None:
    """The Corpus map page's default view: the demo texts' map at the model's last layer,
    uncorrected (made once and stored in the cache dir, loaded from there after)."""
    settings = Settings()
    enc = webapp.state.encoder_for(settings)
    config = CorpusMapConfig(layer=str(enc.n_layers), correction=CORRECTIONS[0], max_sentences=0)
    build = webapp.caches.corpus_map_build("demo", config, settings=settings)
    while not build.done:
        time.sleep(0.1)
    if build.error is not None:
        raise build.error


def _wsd_answer() -> None:
    """The WSD bi-encoder shipped for the packaged model, and the glosses of the WSD page's
    default word (its first answer is then a context pass away)."""
    bi = webapp.caches.biencoder_for(None, None)
    if bi is not None:
        pairs = target_lemmas(WSD_WORD, webapp.caches.wordnet())
        bi.index(pairs, webapp.caches.wordnet())
        bi.encoder.encode([split_words(WSD_TEXT)], progress=False)


def _umap() -> None:
    """UMAP's numba code, compiled once per process (the first fit of a process compiles)."""
    points = np.random.default_rng(0).normal(size=(30, 8))
    Projector(n_neighbors=5, random_state=0).fit(points)


#: What the server loads at start, in order: the model first, then each page's default view in
#: the order a visitor meets the pages (Explore, Geometry, Senses, Corpus map, WSD).
STEPS: tuple[tuple[str, Callable[[], None]], ...] = (
    ("the packaged model", _model),
    ("FAISS", _faiss),
    ("the Explore page's default view", _explore_view),
    ("WordNet", _wordnet),
    ("the list of datasets", _datasets),
    ("the Geometry page's default view", _geometry_view),
    ("UMAP's compiled code", _umap),
    ("the Senses page's default view", _senses_view),
    ("the Corpus map page's default view", _corpus_map_view),
    ("the WSD bi-encoder", _wsd_answer),
)


@st.cache_resource
def _status() -> tuple[list[Step], threading.Lock]:
    return [Step(name) for name, _ in STEPS], threading.Lock()


def run_steps(steps: tuple[tuple[str, Callable[[], None]], ...] = STEPS) -> list[Step]:
    """Run ``steps`` one after the other, recording each one's state; returns the record."""
    record, lock = _status()
    for (name, work), step in zip(steps, record):
        with lock:
            step.state = "running"
        t = time.perf_counter()
        try:
            work()
        except Exception as exc:  # noqa: BLE001 - a failed step is shown on the page
            log.warning("preloading %s failed", name, exc_info=True)
            with lock:
                step.state, step.error = "failed", f"{type(exc).__name__}: {exc}"
        else:
            with lock:
                step.state = "done"
        step.seconds = time.perf_counter() - t
        log.info("preloaded %s in %.1f s", name, step.seconds)
    return record


@st.cache_resource
def start() -> threading.Thread:
    """Start :func:`run_steps` in a daemon thread, once per process; returns the thread."""
    thread = threading.Thread(target=run_steps, name="workbench-preload", daemon=True)
    thread.start()
    return thread


def status() -> list[Step]:
    """A copy of every step's state now."""
    record, lock = _status()
    with lock:
        return [Step(s.name, s.state, s.seconds, s.error) for s in record]


@contextlib.asynccontextmanager
async def lifespan(app: Any) -> AsyncIterator[dict[str, Any]]:
    """Streamlit's server lifespan: start the preload thread and return at once (the server
    accepts connections meanwhile). Nothing raised here can stop the server."""
    try:
        start()
    except Exception:  # noqa: BLE001 - the pages load what they need themselves
        log.exception("could not start preloading")
    yield {}


#: The server's route that tells how far the preload is (JSON; for a deployment's readiness
#: check and the tests): ``{"ready": bool, "steps": [{"name", "state", "seconds", "error"}]}``.
STATUS_PATH = "/_workbench/preload"


async def status_endpoint(request: Any) -> Any:
    """The JSON answer of :data:`STATUS_PATH`: ready once no step waits or runs."""
    from starlette.responses import JSONResponse

    steps = status()
    ready = all(s.state in ("done", "failed") for s in steps)
    return JSONResponse({"ready": ready, "steps": [asdict(s) for s in steps]})


def routes() -> list[Any]:
    """The server's own routes beside Streamlit's (:data:`STATUS_PATH`)."""
    from starlette.routing import Route

    return [Route(STATUS_PATH, status_endpoint)]


def show_failures() -> None:
    """An in-page warning for every step that failed at server start (the page goes on)."""
    failed = [s for s in status() if s.state == "failed"]
    for step in failed:
        st.warning(
            f"The server could not load {step.name} when it started ({step.error[:300]}). "
            "This page tries again when it needs it.",
            icon=":material/warning:",
        )
