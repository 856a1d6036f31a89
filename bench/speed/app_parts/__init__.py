"""The parts of ``python -m bench run app`` (``bench/speed/app.py``, which numbers them and
writes the report), one module per kind of measurement:

* :mod:`.in_process`: parts 1, 2 and 5, measured in this process without a server (UMAP, the
  Senses page's layer switch through Streamlit's ``AppTest``, the separation curve);
* :mod:`.first_visit`: parts 3, 7 and 8, a freshly started server's first visitors (the first
  chart, the WSD page on an empty cache, ready before the first visitor);
* :mod:`.warm`: parts 4, 6 and 9, a warm server answering a visitor's changes (side by side,
  a WSD rerun, each page's interactions);
* :mod:`.corpus_map`: part 10, the corpus map in the browser;
* :mod:`.floor`: the bare Streamlit apps that parts 8 and 9 measure beside the workbench.

The server and the browser come from :mod:`devtools.appserver` and :mod:`devtools.browser`.
"""

from pathlib import Path

#: The repository's root: the folder holding ``app.py``, which the servers run.
REPO = Path(__file__).resolve().parents[3]
