"""Connecting to Ray, and sizing the pool of workers from what the cluster has.

Ray is an optional dependency (``pip install -e '.[scale]'``): it is imported inside the
functions here, so ``workbench`` and its command line load without it.

* ``address=None``: a local Ray started for this job and shut down after it;
* ``address="auto"``: the cluster started on this machine by ``ray start --head``;
* ``address="host:port"``: that cluster's head (``ray start --head --port PORT`` prints it).

A Ray session the caller opened already (``ray.init`` in a notebook or a test) is used as is and
left open.

A cluster named by ``host:port`` that cannot be reached is reported within about
``ClusterConfig.connect_timeout`` seconds (``--connect-timeout``, default 30), not after Ray's
own, much longer, retries: a TCP connection to the address is tried first, with that
timeout (a closed port or an unknown host fails at once), then Ray connects once, its own waits
bounded by the same timeout (``RAY_py_gcs_connect_timeout_s`` and
``RAY_gcs_server_port_wait_time_s`` for the call, as Ray reads them; a Ray imported before
may wait longer, by its own defaults).
"""

from __future__ import annotations

import logging
import math
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any

from workbench.distributed.config import ClusterConfig
from workbench.errors import InputError


def reach(address: str, timeout: float) -> None:
    """Open (and close) a TCP connection to ``host:port`` within ``timeout`` seconds.

    Raises:
        InputError: not a ``host:port`` address, or nothing answers there in time.
    """
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise InputError(f"--address {address!r} is not host:port (or 'auto')")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as exc:
        reason = "no answer" if isinstance(exc, TimeoutError) else (exc.strerror or str(exc))
        raise InputError(
            f"cannot reach the Ray cluster at {address} within {timeout:g} s ({reason}): check "
            "the address (`ray start --head` prints it) and that the cluster runs; "
            "--connect-timeout sets how long to wait"
        ) from None


@contextmanager
def _bounded_waits(timeout: float) -> Iterator[None]:
    """Ray's own waits for a cluster, bounded by ``timeout`` for the duration (restored after:
    a local Ray started later must not inherit them)."""
    wanted = {
        "RAY_py_gcs_connect_timeout_s": str(max(1, math.ceil(timeout))),
        "RAY_gcs_server_port_wait_time_s": "1",  # one connection attempt, not twenty
    }
    before = {k: os.environ.get(k) for k in wanted}
    os.environ.update(wanted)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def remote_address(address: str | None) -> bool:
    """Whether ``address`` names a cluster by host and port (not a local or ``auto`` one)."""
    return address not in (None, "auto", "local") and "://" not in str(address)


def import_ray() -> Any:
    """The ``ray`` module, or an InputError saying how to install it."""
    try:
        import ray  # optional: only the distributed path needs it
        import ray.data  # noqa: F401 - Ray Data is part of the `scale` extra
    except ImportError as exc:
        raise InputError(
            f"the Ray engine needs Ray Data ({exc}): pip install -e '.[scale]'"
        ) from exc
    return ray


@contextmanager
def ray_session(cluster: ClusterConfig) -> Iterator[Any]:
    """Yield the ``ray`` module connected as ``cluster`` says (see the module docstring).

    Raises:
        InputError: Ray is not installed, or the cluster at ``cluster.address`` cannot be
            reached (token authentication: set ``RAY_AUTH_MODE=token`` on this machine too).
    """
    remote = remote_address(cluster.address)
    if remote:
        reach(str(cluster.address), cluster.connect_timeout)
    with _bounded_waits(cluster.connect_timeout) if remote else nullcontext():
        ray = import_ray()  # first import: Ray reads some of the bounded waits here
        opened = ray.is_initialized()  # by the caller: used as is, left open
        if not opened:
            _connect(ray, cluster)
    if opened:
        yield ray
        return
    try:
        yield ray
    finally:
        ray.shutdown()


def _connect(ray: Any, cluster: ClusterConfig) -> None:
    """``ray.init`` as ``cluster`` says; any failure is one InputError."""
    logging.getLogger("ray.data").setLevel(logging.WARNING)
    try:
        if cluster.address is None:
            ray.init(
                address="local",
                num_cpus=cluster.local_cpus,
                include_dashboard=False,
                logging_level=logging.WARNING,
            )
        else:
            ray.init(address=cluster.address, logging_level=logging.WARNING)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = (
            "a local Ray" if cluster.address is None else f"the Ray cluster at {cluster.address}"
        )
        raise InputError(
            f"cannot start or reach {where} ({exc}); a cluster with token authentication also "
            "needs RAY_AUTH_MODE=token on this machine"
        ) from exc


@dataclass(frozen=True)
class Pool:
    """How many actors run and what each reserves."""

    workers: int
    cpus: int
    gpus: float
    device: str | None


def size_pool(ray: Any, cluster: ClusterConfig, n_parts: int) -> Pool:
    """The actor pool for ``n_parts`` parts on the connected cluster.

    One actor per GPU where the cluster has GPUs (``gpus_per_worker`` each), else one per
    ``cpus_per_worker`` CPUs; never more actors than parts, nor than fit on the cluster at once
    (more would wait for resources that never come).

    Raises:
        InputError: the cluster cannot hold a single actor of the requested size.
    """
    resources = ray.cluster_resources()
    n_cpus, n_gpus = float(resources.get("CPU", 0)), float(resources.get("GPU", 0))
    gpus = cluster.gpus_per_worker if cluster.gpus_per_worker is not None else min(1.0, n_gpus)
    if gpus > n_gpus or cluster.cpus_per_worker > n_cpus:
        raise InputError(
            f"each worker asks for {cluster.cpus_per_worker} CPUs and {gpus:g} GPUs; the "
            f"cluster has {n_cpus:g} CPUs and {n_gpus:g} GPUs"
        )
    fit = int(n_gpus // gpus) if gpus > 0 else int(n_cpus // cluster.cpus_per_worker)
    workers = max(1, fit) if cluster.workers is None else min(cluster.workers, max(1, fit))
    device = cluster.device if cluster.device is not None else (None if gpus > 0 else "cpu")
    return Pool(max(1, min(workers, n_parts)), cluster.cpus_per_worker, gpus, device)
