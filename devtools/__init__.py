"""Development tooling that ``tests/`` and ``bench/`` share: the Streamlit app's server run as a
child process (:mod:`devtools.appserver`) and the headless browser that visits it
(:mod:`devtools.browser`).

Not part of the installed package (``pyproject.toml`` ships ``workbench*`` only) and never
imported by the library, the app or the command line: it is found from the repository's root
(pytest's ``pythonpath``, ``python -m bench`` run there). It never imports streamlit or
playwright itself.
"""
