"""Ray for sweeps: ``replay --ray`` and ``bench sufficiency --ray`` run each trajectory or task as
a Ray task, on a cluster or a local one, and give what the single-process run gives.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from contextfold.core.errors import ConfigError
from contextfold.strategies.folding import FoldCache, FolderSource

__all__ = ["LOCAL", "FolderChoice", "RaySweep", "ray_sweep"]

LOCAL = "local"
"""The ``--ray`` value that starts a local cluster (what a bare ``--ray`` means on the command
line: see :func:`contextfold.commands.common.ray_argv`)."""

INSTALL = "pip install 'contextfold[cluster]'"

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class FolderChoice:
    """What a worker needs to build its folders (a picklable ``--folder``)."""

    default: str | None = None
    base_url: str | None = None
    cache: str | None = None
    """Fold cache file; None: no cache."""
    threads: int = 2
    """CPU threads of an embedded folder."""

    def source(self) -> FolderSource:
        cache = FoldCache(self.cache) if self.cache is not None else None
        return FolderSource(
            default=self.default, base_url=self.base_url, cache=cache, threads=self.threads
        )


class RaySweep:
    """Runs jobs as Ray tasks, at most ``workers`` at once (a local cluster gets that many
    CPUs; all of the cluster's when None).

    Each job is a plain function of picklable arguments (a trajectory and the replay's settings, or
    a task id and the settings of the sweep), so a Ray task computes exactly what the
    single-process loop computes; results come back in the order of the jobs, the same as without
    Ray (the timings aside). Folder models and the fold cache are built in each worker from a
    :class:`FolderChoice`, never shipped.
    """

    def __init__(self, ray: Any, workers: int | None) -> None:
        self._ray = ray
        self.workers = workers

    def map(
        self,
        fn: Callable[..., T],
        jobs: Sequence[tuple[Any, ...]],
        *,
        shared: tuple[Any, ...] = (),
        on_done: Callable[[int], None] | None = None,
    ) -> list[T]:
        """``fn(*shared, *job)`` for every job, as Ray tasks; results in the order of
        ``jobs``. ``shared`` is put in the object store once, not sent with every job;
        ``on_done(i)`` hears of each job as it finishes (in any order)."""
        remote = self._ray.remote(num_cpus=1, max_retries=0)(fn)
        refs = tuple(self._ray.put(value) for value in shared)
        limit = self.workers or len(jobs) or 1
        pending: dict[Any, int] = {}
        results: dict[int, T] = {}
        queue = list(enumerate(jobs))
        queue.reverse()
        while queue or pending:
            while queue and len(pending) < limit:
                i, job = queue.pop()
                pending[remote.remote(*refs, *job)] = i
            done, _ = self._ray.wait(list(pending), num_returns=1)
            for ref in done:
                i = pending.pop(ref)
                results[i] = self._get(ref)
                if on_done is not None:
                    on_done(i)
        return [results[i] for i in range(len(jobs))]

    def _get(self, ref: Any) -> Any:
        try:
            return self._ray.get(ref)
        except self._ray.exceptions.RayTaskError as exc:
            cause = exc.as_instanceof_cause()
            if isinstance(cause, Exception):
                raise cause from None
            raise


@contextmanager
def ray_sweep(address: str, *, workers: int | None = None) -> Iterator[RaySweep]:
    """Connect to the cluster at ``address`` (``local``: start one on this machine) for the
    block; a cluster the program already joined is used as is.

    A program that has already called ``ray.init`` (a test, a notebook) keeps its cluster: the
    sweep uses it and leaves it running.
    """
    try:
        import ray
    except ImportError as exc:
        raise ConfigError(f"--ray needs Ray: {INSTALL}") from exc
    if ray.is_initialized():
        yield RaySweep(ray, workers)
        return
    options: dict[str, Any] = {"include_dashboard": False, "logging_level": "ERROR"}
    if address == LOCAL:
        options["num_cpus"] = workers
    else:
        _check_reachable(address)
        options["address"] = address
    try:
        ray.init(**options)
    except (ConnectionError, ValueError, RuntimeError) as exc:
        raise ConfigError(
            f"cannot join the Ray cluster at {address!r}: {exc}; give the head's address "
            "(host:6379, ray://host:10001, auto) or --ray alone for a local cluster"
        ) from exc
    try:
        yield RaySweep(ray, workers)
    finally:
        ray.shutdown()


def _check_reachable(address: str) -> None:
    """Fail in seconds on a head that does not answer (Ray itself retries for minutes)."""
    hostport = address.removeprefix("ray://")
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit():
        return  # "auto" and the like: Ray finds the local cluster itself, and fails fast
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=5).close()
    except OSError as exc:
        raise ConfigError(
            f"cannot join the Ray cluster at {address!r}: nothing answers there ({exc}); "
            "start the head (ray start --head) or give its address, or --ray alone for a "
            "local cluster"
        ) from exc
