"""Where a sweep's runs (and batches of rollouts) execute: this process, worker processes or Ray.

:func:`parallel_map` calls ``fn(*job)`` for every job and yields the results as they finish.
Worker processes are forked on Linux (they start with the parent's imports and caches) and die
with their parent (:func:`die_with_parent`); Ray is the optional ``ray`` extra. An :class:`Executor` keeps
its processes (or its Ray connection, ``address`` naming a cluster started with ``ray start --head``) over
many calls, for work whose batches are short (a search's rollouts).
"""

from __future__ import annotations

import os
import sys
import threading
import time
import weakref
from pathlib import Path

from tracker.errors import ConfigError, TrackerError


def parallel_map(fn, jobs: list[tuple], workers: int = 1, backend: str = "local"):
    """``fn(*job)`` for every job, in parallel on the sweep's backends; yields results as they finish.

    ``local``: worker processes (forked on Linux, so they start with the parent's imports and caches;
    they die with the parent); ``ray``: Ray tasks. ``fn`` must be a module-level function. Rollout
    batches (:mod:`tracker.sampling.pool`) run through here as sweep runs do.
    """
    if backend not in ("local", "ray"):
        raise ConfigError(f"backend {backend!r} is not one of: local, ray")
    if backend == "ray":
        yield from ray_map(jobs, workers, fn)
    elif workers == 1 or len(jobs) <= 1:
        for j in jobs:
            yield fn(*j)
    else:
        yield from pool_map(jobs, workers, fn)


def pool_map(jobs: list[tuple], workers: int, fn):
    with process_pool(min(workers, len(jobs))) as pool:
        yield from _pool_results(pool, fn, jobs)


def process_pool(workers: int):
    """A process pool whose workers die with this process.

    Linux: fork, so that workers start at once with the parent's imports, sweep and reference (the
    parent holds no PyBullet client and no threads yet). Elsewhere: fresh interpreters (spawn).
    """
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    method = "fork" if sys.platform.startswith("linux") else "spawn"
    return ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context(method),
                               initializer=die_with_parent, initargs=(os.getpid(),))


def _pool_results(pool, fn, jobs: list[tuple]):
    """``fn(*job)`` on ``pool`` for every job, yielded as they finish; the rest cancelled on an error."""
    from concurrent.futures import as_completed

    futures = [pool.submit(fn, *j) for j in jobs]
    try:
        for fut in as_completed(futures):
            yield fut.result()
    except BaseException:
        for f in futures:
            f.cancel()
        raise


#: How often a worker checks that its parent is still there, s.
WATCHDOG_PERIOD_S = 0.5


def die_with_parent(parent_pid: int) -> None:
    """Make this worker process end when ``parent_pid`` (the sweep) does, however it ends.

    On Linux the kernel sends SIGKILL to the worker when its parent dies (``prctl``
    ``PR_SET_PDEATHSIG``); everywhere a daemon thread also checks every
    :data:`WATCHDOG_PERIOD_S` seconds that the parent is still its parent, and ends the
    process otherwise (a worker orphaned before the ``prctl`` call, or a platform without it).
    A killed sweep's unfinished run has no metrics.json, so the next run of the sweep redoes it.
    """
    import threading

    if sys.platform.startswith("linux"):
        try:
            import ctypes
            import signal

            libc = ctypes.CDLL(None, use_errno=True)
            pr_set_pdeathsig = 1
            libc.prctl(pr_set_pdeathsig, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):
            pass  # the watchdog below still works
    if os.getppid() != parent_pid:  # the parent died before the prctl call took effect
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(WATCHDOG_PERIOD_S)
            if os.getppid() != parent_pid:
                os._exit(1)

    threading.Thread(target=watch, name="tracker-parent-watchdog", daemon=True).start()


def require_ray():
    try:
        import ray
    except ImportError:
        raise TrackerError("--backend ray needs the optional 'ray' extra; install it with: pip install -e '.[ray]'") \
            from None
    return ray


def ray_map(jobs: list[tuple], workers: int, fn, address: str | None = None):
    started = connect_ray(workers, address)
    try:
        yield from _ray_results(fn, jobs)
    finally:
        if started:
            require_ray().shutdown()


def connect_ray(workers: int, address: str | None = None) -> bool:
    """Connect this process to Ray (once): the cluster at ``address`` (``HOST:PORT``, else ``RAY_ADDRESS``),
    or a local one of ``workers`` CPUs. True if this call connected (the caller shuts it down)."""
    ray = require_ray()
    if ray.is_initialized():
        return False
    import tracker

    pkg_parent = str(Path(tracker.__file__).resolve().parents[1])
    env = {"PYTHONPATH": os.pathsep.join(p for p in (pkg_parent, os.environ.get("PYTHONPATH", "")) if p),
           "OMP_NUM_THREADS": "1"}
    kwargs: dict = {"runtime_env": {"env_vars": env}, "log_to_driver": False, "include_dashboard": False,
                    "configure_logging": False}
    if address:
        kwargs["address"] = address
    elif not os.environ.get("RAY_ADDRESS"):
        kwargs["num_cpus"] = workers
    ray.init(**kwargs)
    return True


def _ray_results(fn, jobs: list[tuple]):
    ray = require_ray()
    remote = ray.remote(num_cpus=1)(fn)
    pending = [remote.remote(*j) for j in jobs]
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        for ref in done:
            yield ray.get(ref)


class Executor:
    """Workers kept across many :meth:`map` calls (a search's batches): forked processes, or a Ray connection.

    The processes (or Ray's worker processes, which Ray reuses from task to task) keep what ``fn`` caches
    per process, such as a built simulation, so a batch pays for its work alone. Close it (or use it as a
    context manager) to end the processes and disconnect from Ray.

    Args:
        workers: parallel workers (>= 1).
        backend: ``local`` or ``ray``.
        address: Ray cluster ``HOST:PORT`` (``ray``; default ``RAY_ADDRESS``, else a local Ray of ``workers`` CPUs).
    """

    def __init__(self, workers: int, backend: str = "local", address: str | None = None) -> None:
        if backend not in ("local", "ray"):
            raise ConfigError(f"backend {backend!r} is not one of: local, ray")
        self.workers, self.backend, self.address = workers, backend, address
        self._pool = None
        self._ray_started = False
        self._ray = False

    def map(self, fn, jobs: list[tuple]):
        """``fn(*job)`` for every job; yields the results as they finish."""
        if self.backend == "ray":
            if not self._ray:
                self._ray_started = connect_ray(self.workers, self.address)
                self._ray = True
            yield from _ray_results(fn, jobs)
            return
        if self.workers == 1:
            for j in jobs:
                yield fn(*j)
            return
        if self._pool is None:
            self._pool = process_pool(self.workers)
            # an executor dropped without close() still ends its processes
            weakref.finalize(self, self._pool.shutdown, wait=False, cancel_futures=True)
        yield from _pool_results(self._pool, fn, jobs)

    def close(self) -> None:
        """End the worker processes; disconnect from Ray if this executor connected."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        if self._ray_started:
            require_ray().shutdown()
        self._ray = self._ray_started = False

    def __enter__(self) -> "Executor":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
