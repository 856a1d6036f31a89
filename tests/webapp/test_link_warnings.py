"""Opening a copied link logs no Streamlit warning that a widget "was created with a default
value but also had its value set via the Session State API": a link's values go into Session
State before the widgets are drawn, so no widget of a page may also be given a default
(``value=``, ``index=``, ``default=`` or a positional one).

Each page (and its side-by-side and several-words views) is opened under AppTest with the
settings of a first opening; the link that opening wrote into the URL is then opened in a new
session. Streamlit logs that warning once per process only, so the test lets it log every time.
"""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
#: Each page and the settings of its first opening (the view whose link is then opened).
VIEWS = (
    ("explore", {}),
    ("explore", {"compare": "1"}),
    ("geometry", {}),
    ("senses", {}),
    ("senses", {"compare": "1"}),
    ("senses", {"source": "wordnet", "word": "plant"}),
    ("senses", {"view": "several words", "method": "pca"}),
    ("corpus_map", {}),
    ("wsd", {}),
    ("finetune", {}),
    ("finetune", {"data": "upload", "run": "my-run", "epochs": "3", "lr": "0.0001"}),
)

pytestmark = pytest.mark.slow


@pytest.fixture
def duplicate_warnings(monkeypatch) -> list[str]:
    """The widget keys Streamlit warns about from now on (every time, not once per process)."""
    import streamlit.elements.lib.policies as policies

    keys: list[str] = []
    check = policies.check_session_state_rules

    def every_time(*args, **kwargs):
        monkeypatch.setattr(policies, "_shown_default_value_warning", False)
        return check(*args, **kwargs)

    def warning(message, *args, **kwargs):
        if "default value" in str(message):
            keys.append(str(args[0]) if args else str(message))

    monkeypatch.setattr(policies, "check_session_state_rules", every_time)
    monkeypatch.setattr(policies._LOGGER, "warning", warning)
    return keys


@pytest.mark.parametrize(
    ("page", "first"), VIEWS, ids=[f"{p}-{'-'.join(q) or 'default'}" for p, q in VIEWS]
)
def test_opening_a_copied_link_warns_about_no_widget(page, first, duplicate_warnings):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=600)
    at.query_params.update(first)
    at.switch_page(f"webapp/pages/{page}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    link = {k: v[0] if isinstance(v, list) else v for k, v in at.query_params.items()}
    assert set(first) <= set(link), link  # the first opening wrote its link
    duplicate_warnings.clear()  # a first opening sets no Session State: only the link counts
    again = AppTest.from_file(str(REPO / "app.py"), default_timeout=600)
    again.query_params.update(link)
    again.switch_page(f"webapp/pages/{page}.py").run()
    assert not again.exception, [e.value for e in again.exception]
    assert duplicate_warnings == [], f"{page} opened from {link}"
