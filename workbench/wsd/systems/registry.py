"""The WSD systems by name: :data:`SYSTEMS`, one line per system, the default first; what the
command line's ``--system`` choices and the app's choice of systems list.

Adding a system: its module in this package (a subclass of
:class:`~workbench.wsd.systems.base.System` and its instance), and its line here.

Example::

    SYSTEMS["best"].config.propagate                         # 'lexname'
    get_system("plain").label                                # 'plain 1-NN on SemCor'
    system_label("plain", PACKAGED_FINGERPRINT, "float32")   # 'plain 1-NN on SemCor (68.4 F1 ...)'
"""

from __future__ import annotations

from workbench.errors import InputError
from workbench.wsd.systems.base import System
from workbench.wsd.systems.biencoder import BIENCODER_SYSTEM
from workbench.wsd.systems.centroids import BEST_SYSTEM, PLAIN_SYSTEM
from workbench.wsd.systems.wordnet import WORDNET_SYSTEM

SYSTEMS: dict[str, System] = {
    BIENCODER_SYSTEM.name: BIENCODER_SYSTEM,
    BEST_SYSTEM.name: BEST_SYSTEM,
    PLAIN_SYSTEM.name: PLAIN_SYSTEM,
    WORDNET_SYSTEM.name: WORDNET_SYSTEM,
}
#: The default of the command line, the library and the app.
DEFAULT_SYSTEM = BIENCODER_SYSTEM.name


def get_system(name: str) -> System:
    """The system called ``name`` (:data:`SYSTEMS`).

    Raises:
        InputError: no system is called ``name`` (the message lists them).
    """
    try:
        return SYSTEMS[name]
    except KeyError:
        raise InputError(f"unknown WSD system {name!r}; known: {', '.join(SYSTEMS)}") from None


def measured_f1(system: str, fingerprint: str, dtype: str) -> float | None:
    """F1 on ALL recorded for ``system`` with the model of ``fingerprint`` computing in
    ``dtype`` (:meth:`System.measured_f1`); None where that combination was not measured."""
    return get_system(system).measured_f1(fingerprint, dtype)


def f1_phrase(system: str, fingerprint: str, dtype: str) -> str:
    """What a user is told ``system`` scores with this model (:meth:`System.f1_phrase`)."""
    return get_system(system).f1_phrase(fingerprint, dtype)


def system_label(system: str, fingerprint: str, dtype: str) -> str:
    """The label of ``system`` in a choice of systems, with what it scores for the model of
    ``fingerprint`` in ``dtype`` (:meth:`System.choice_label`)."""
    return get_system(system).choice_label(fingerprint, dtype)
