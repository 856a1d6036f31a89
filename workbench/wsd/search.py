"""Exact inner-product search of row ranges, in torch, on any device.

The sense index keeps each lemma's candidate senses in one contiguous range of rows, so a
query only ever searches its own range. :class:`TorchRangeSearch` does that search on the
device torch runs on: the GPU where FAISS has no GPU build (the usual case: the GPU FAISS
wheels are large and tied to a CUDA version), or the CPU. It computes what FAISS's
``IndexFlatIP`` with an ``IDSelectorRange`` computes (exact inner products, the ``k`` best
rows of the range, best first) for many queries at once: the queries of a chunk gather their
ranges' rows into one padded ``(n, width, D)`` block, one batched product scores them and
``topk`` picks the best; padding scores ``-inf`` and never wins.

Example::

    search = TorchRangeSearch(unit_rows, "cuda")            # rows (n_rows, D) float32
    scores, rows = search.search(queries, starts, stops, k=2)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from workbench.errors import InputError

if TYPE_CHECKING:
    import torch

CHUNK_ELEMENTS = 1 << 25  # gathered floats per chunk at most (128 MB of float32)


class TorchRangeSearch:
    """Exact inner-product search restricted to a row range per query.

    Args:
        rows: ``(n_rows, D)`` float32, the index's rows (copied to ``device`` once).
        device: a torch device (``cuda``, ``cuda:1``, ``cpu``).

    Attributes:
        device: where the rows live and the products run.
    """

    def __init__(self, rows: np.ndarray, device: str) -> None:
        import torch

        self.device = device
        self._rows: torch.Tensor = torch.from_numpy(np.ascontiguousarray(rows, np.float32)).to(
            device
        )

    def search(
        self, queries: np.ndarray, starts: np.ndarray, stops: np.ndarray, k: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` best rows of ``[starts[i], stops[i])`` for each query ``i``.

        Args:
            queries: ``(n, D)`` float32.
            starts, stops: ``(n,)`` int64 row range of each query.
            k: neighbours per query.

        Returns:
            ``(scores (n, k) float32, rows (n, k) int64)``, best first; ``NaN`` / ``-1``
            past the end of a range shorter than ``k``.
        """
        import torch

        queries = np.ascontiguousarray(queries, dtype=np.float32)
        starts = np.asarray(starts, dtype=np.int64)
        stops = np.asarray(stops, dtype=np.int64)
        n = len(queries)
        if not (len(starts) == len(stops) == n) or (n and queries.shape[1] != self._rows.shape[1]):
            raise InputError(
                f"search: {n} queries of width {queries.shape[-1]}, {len(starts)} starts and "
                f"{len(stops)} stops, for rows of width {self._rows.shape[1]}"
            )
        scores = np.full((n, k), np.nan, dtype=np.float32)
        found = np.full((n, k), -1, dtype=np.int64)
        sizes = np.maximum(stops - starts, 0)
        if n == 0 or k < 1 or not sizes.any():
            return scores, found
        order = np.argsort(sizes, kind="stable")  # chunks of similar widths pad little
        dim = self._rows.shape[1]
        at = 0
        while at < n:
            take = max(1, CHUNK_ELEMENTS // (max(int(sizes[order[at]]), 1) * dim))
            while take > 1 and int(sizes[order[min(n, at + take) - 1]]) * take * dim > (
                CHUNK_ELEMENTS
            ):
                take //= 2  # the chunk's widest range decides its memory
            chunk = order[at : at + take]
            width = max(int(sizes[chunk].max()), 1)
            at += len(chunk)
            s, sz = torch.from_numpy(starts[chunk]), torch.from_numpy(sizes[chunk])
            offsets = torch.arange(width)
            valid = offsets[None, :] < sz[:, None]  # (c, width)
            index = torch.where(valid, s[:, None] + offsets[None, :], 0).to(self.device)
            q = torch.from_numpy(queries[chunk]).to(self.device)
            block = self._rows[index.reshape(-1)].reshape(len(chunk), width, dim)
            sims = torch.bmm(block, q[:, :, None])[:, :, 0]  # (c, width)
            sims = sims.masked_fill(~valid.to(self.device), float("-inf"))
            best, where = sims.topk(min(k, width), dim=1)  # sorted, best first
            rows = index.gather(1, where)
            best_np, rows_np = best.cpu().numpy(), rows.cpu().numpy()
            hit = np.isfinite(best_np)
            kk = best_np.shape[1]
            scores[chunk, :kk] = np.where(hit, best_np, np.nan)
            found[chunk, :kk] = np.where(hit, rows_np, -1)
        return scores, found
