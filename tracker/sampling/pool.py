"""Many rollouts in parallel, through the sweep's backends (local worker processes, or Ray).

A :class:`RolloutPool` splits a batch of :class:`~tracker.sampling.rollout.RolloutRequest` s into
contiguous chunks (:data:`CHUNKS_PER_WORKER` per worker, so that a worker slowed by other load gets fewer)
and runs them on a :class:`tracker.experiments.backends.Executor`, the machinery that runs a sweep's runs
(forked processes that die with their parent; ``ray`` for many machines). The processes are kept from
batch to batch until :meth:`RolloutPool.close`, and each builds its own
:class:`~tracker.sampling.rollout.RolloutWorker` for the config once and keeps it (with the start states
it has restored); start states travel as portable (``bullet``) snapshots. With one local worker the
batch runs in this process, on one worker kept across batches. Results come back in request order, and
are the same whatever the number of workers or the backend (``tests/sampling/test_rollout.py``,
``tests/sampling/test_pool_ray.py``).
"""

from __future__ import annotations

import os

from tracker.errors import ConfigError
from tracker.sampling.cost import CostWeights
from tracker.sampling.rollout import RolloutRequest, RolloutResult, RolloutWorker

#: Chunks a batch is cut into per worker (dealt out as workers finish theirs).
CHUNKS_PER_WORKER = 4
#: Per process: the rollout worker of each config (key: the resolved config text and the weights).
_WORKERS: dict[str, RolloutWorker] = {}
#: The process that built the workers in :data:`_WORKERS` (a forked child inherits the dict but builds its own:
#: it never steps a PyBullet client it did not open).
_OWNER: list[int] = [0]


def _key(config, weights: CostWeights, balls: bool = False) -> str:
    from tracker.experiments.config import dump_config

    return dump_config(config) + repr(weights) + ("\nballs in the rollouts" if balls else "")


def _worker(config, weights: CostWeights, key: str | None = None, balls: bool = False) -> RolloutWorker:
    if _OWNER[0] != os.getpid():  # a forked worker process: the parent's simulations are not its own
        _WORKERS.clear()
        _OWNER[0] = os.getpid()
    key = _key(config, weights, balls) if key is None else key  # dumping the config costs ~8 ms: callers keep theirs
    w = _WORKERS.get(key)
    if w is None:
        from tracker.experiments.runner import build

        for old in _WORKERS.values():  # one simulation per process at a time
            old.close()
        _WORKERS.clear()
        w = _WORKERS[key] = RolloutWorker(build(config), weights, balls=balls)
    return w


def _run_chunk(config, weights: CostWeights, key: str, index: int, requests: list[RolloutRequest],
               balls: bool = False) -> tuple[int, list]:
    """Worker entry: one chunk of a batch; returns ``(index, results)``."""
    return index, _worker(config, weights, key, balls).run_all(requests)


class RolloutPool:
    """Rollouts of one experiment config on ``workers`` processes.

    Args:
        config: the :class:`~tracker.experiments.config.ExperimentConfig`.
        workers: parallel workers (>= 1).
        backend: ``local`` or ``ray``.
        weights: the cost's weights.
        address: the Ray cluster's ``HOST:PORT`` (``ray`` only; default ``RAY_ADDRESS``, else a local Ray).
        balls: launch the config's balls in every rollout (with its gain schedule). Every ball's body
            exists, parked, from the start of a simulation (:meth:`~tracker.scenarios.ball_scenario.
            BallScenario.reset`), so a state saved in one worker restores in any other.
    """

    def __init__(self, config, workers: int = 1, backend: str = "local", weights: CostWeights | None = None,
                 address: str | None = None, balls: bool = False) -> None:
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ConfigError(f"workers must be a whole number >= 1, got {workers!r}")
        if backend not in ("local", "ray"):
            raise ConfigError(f"backend {backend!r} is not one of: local, ray")
        if backend == "ray":
            from tracker.experiments.backends import require_ray

            require_ray()
        self.config = config
        self.workers = workers
        self.backend = backend
        self.weights = weights or CostWeights()
        self.address = address
        self.balls = bool(balls)
        self._key = _key(config, self.weights, self.balls)
        self._executor = None

    @property
    def local(self) -> RolloutWorker:
        """This process's worker (initial states, serial batches)."""
        return _worker(self.config, self.weights, self._key, self.balls)

    def initial_state(self):
        """The portable state at the config's start."""
        return self.local.initial_state()

    def run(self, requests: list[RolloutRequest]) -> list[RolloutResult]:
        """Every request's result, in request order."""
        requests = list(requests)
        if not requests:
            return []
        if self.workers == 1 and self.backend == "local":
            return self.local.run_all(requests)
        for r in requests:
            if not r.start.portable:
                raise ConfigError("parallel rollouts need portable start states (technique 'bullet')")
        if self._executor is None:
            from tracker.experiments.backends import Executor

            self._executor = Executor(self.workers, self.backend, self.address)
        n = min(self.workers * CHUNKS_PER_WORKER, len(requests))
        bounds = [round(i * len(requests) / n) for i in range(n + 1)]
        jobs = [(self.config, self.weights, self._key, i, requests[bounds[i]:bounds[i + 1]], self.balls)
                for i in range(n)]
        chunks: dict[int, list] = {}
        for index, results in self._executor.map(_run_chunk, jobs):
            chunks[index] = results
        return [res for i in range(n) for res in chunks[i]]

    def close(self) -> None:
        """End the worker processes (or leave Ray) and close this process's worker of the config."""
        if self._executor is not None:
            self._executor.close()
            self._executor = None
        w = _WORKERS.pop(self._key, None) if _OWNER[0] == os.getpid() else None
        if w is not None:
            w.close()
