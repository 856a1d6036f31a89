"""The model settings a page works with: the sidebar's choices as one value, the current ones,
and the layer specs offered for a model.

Every cache key that depends on the model starts with :attr:`Settings.key`.

Example::

    settings = current()                    # Settings(model=None, device=None, ...)
    layer_options(6)                        # ['last4-sum', 'last4-mean', '6', '5', ..., '0']
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

DEFAULT_LAYERS = "last4-sum"


@dataclass(frozen=True)
class Settings:
    """The sidebar's choices; every cache key that depends on the model starts with ``key``."""

    model: str | None = None  # None: the packaged model; else a HF id or a local directory
    device: str | None = None  # None: the best available
    pooling: str = "mean"  # subword -> word pooling
    layers: str = DEFAULT_LAYERS  # LayerSpec string: "6", "-1", "last4-sum", ...

    @property
    def key(self) -> tuple:
        return (self.model, self.device, self.pooling)


def current() -> Settings:
    """The settings chosen in the sidebar (defaults before the sidebar ran)."""
    return st.session_state.get("settings", Settings())


def layer_options(n_layers: int) -> list[str]:
    """Layer specs offered in the sidebar for a model with ``n_layers`` layers: the sum and
    the mean of the last four hidden states where it has four, then each layer."""
    last4 = ["last4-sum", "last4-mean"] if n_layers + 1 >= 4 else []
    return [*last4, *[str(i) for i in range(n_layers, -1, -1)]]
