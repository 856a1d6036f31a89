"""The default views' inputs: what a page shows before its visitor changes anything, and what
the server preloads at start (:mod:`webapp.preload`)."""

from __future__ import annotations

#: The Explore page's default text.
EXPLORE_TEXT = """\
She deposited the cheque at the bank before noon.
We had a picnic on the grassy bank of the river.
The bank raised its interest rates again.
Fishermen lined the muddy bank at dawn.
He asked the bank for a small loan."""

#: The WSD page's default sentence and word (the server warms their answer at start).
WSD_TEXT = "He sat on the bank of the river and watched the boats."
WSD_WORD = "bank"

#: The Geometry page's default sample of its corpus and word pairs per layer.
GEOMETRY_SAMPLE = 500
GEOMETRY_PAIRS = 20_000
