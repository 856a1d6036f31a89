"""The hand-made evaluation of :mod:`tests.wsd.reporting.handmade` as a fixture."""

from __future__ import annotations

import pytest

from tests.wsd.reporting.handmade import HandMade, hand_made


@pytest.fixture
def made() -> HandMade:
    return hand_made()
