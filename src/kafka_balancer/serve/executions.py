"""Runs the executor (``executor/runner.py``, unchanged) for the service: one execution at a time, in a
thread, with a stop switch, progress read from the executor's journal, and resume after a crash.

Stopping: the adapter the executor polls through raises :class:`StopRequested` at its next call; the
executor records the interruption and clears its throttle as on any error, and the runner then cancels
the reassignments still in flight (``executor/cancel.py``), as ``kafka-balancer cancel`` does.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kafka_balancer.errors import BalancerError
from kafka_balancer.executor.journal import Journal
from kafka_balancer.executor.kafka_adapter import KafkaAdapter
from kafka_balancer.executor.runner import ExecOptions, Executor
from kafka_balancer.executor.view import TP, ClusterView
from kafka_balancer.model.plan_io import Plan


class StopRequested(Exception):
    """An operator asked the running execution to stop."""


class StoppableAdapter(KafkaAdapter):
    """The executor's adapter with a stop switch checked before each poll and submission."""

    stop_flag: threading.Event

    def _check(self) -> None:
        flag = getattr(self, "stop_flag", None)
        if flag is not None and flag.is_set():
            raise StopRequested("stopped by the operator")

    def view(self, topics: Iterable[str] | None = None, with_sizes: bool = True) -> ClusterView:
        self._check()
        return super().view(topics, with_sizes)

    def submit(self, targets: Mapping[TP, Sequence[int]]) -> dict[TP, str]:
        self._check()
        return super().submit(targets)


@dataclass
class Running:
    id: str
    started: float
    thread: threading.Thread
    stop: threading.Event


class ExecutionRunner:
    def __init__(self, bootstrap: str, journal_path: Path, options: ExecOptions,
                 on_done: Callable[[str, dict[str, Any]], None], say: Callable[[str], None],
                 security: Any = None) -> None:
        self.bootstrap = bootstrap
        self.security = security
        self.journal = Journal(journal_path)
        self.options = options
        self.on_done = on_done
        self.say = say
        self.current: Running | None = None
        self._lock = threading.Lock()

    @property
    def busy(self) -> bool:
        with self._lock:
            return self.current is not None and self.current.thread.is_alive()

    def unfinished(self) -> bool:
        """The journal records an execution that neither finished nor was cancelled (a crash)."""
        return self.journal.state().open

    def start(self, exec_id: str, plan: Plan | None) -> None:
        """Run ``plan`` (None: resume the journal's execution) in a thread."""
        with self._lock:
            if self.current is not None and self.current.thread.is_alive():
                raise RuntimeError("an execution is running")
            stop = threading.Event()
            t = threading.Thread(target=self._run, args=(exec_id, plan, stop), name=f"execution-{exec_id}",
                                 daemon=True)
            self.current = Running(exec_id, time.time(), t, stop)
            t.start()

    def stop(self) -> bool:
        with self._lock:
            if self.current is None or not self.current.thread.is_alive():
                return False
            self.current.stop.set()
            return True

    def join(self, timeout: float | None = None) -> None:
        cur = self.current
        if cur is not None:
            cur.thread.join(timeout)

    def progress(self) -> dict[str, Any]:
        """Partitions and bytes done so far, from the journal."""
        st = self.journal.state()
        total = len(st.plan)
        moved = len(st.moved)
        planned = sum(st.sizes.get(tp, 0) * len(set(t) - set(st.original.get(tp, ()))) for tp, t in st.plan)
        done = sum(st.sizes.get(tp, 0) * len(set(t) - set(st.original.get(tp, ()))) for tp, t in st.plan
                   if tp in st.moved)
        return {"partitions": total, "partitions_moved": moved, "bytes_planned": planned, "bytes_moved": done,
                "submitted": len(st.submitted), "throttle_set": st.throttle is not None,
                "open": st.open, "last_event": st.last_event}

    def _run(self, exec_id: str, plan: Plan | None, stop: threading.Event) -> None:
        t0 = time.monotonic()
        result: dict[str, Any] = {"state": "failed"}
        adapter: StoppableAdapter | None = None
        try:
            adapter = StoppableAdapter.connect(self.bootstrap, security=self.security)  # type: ignore[assignment]
            assert adapter is not None
            adapter.stop_flag = stop
            if plan is not None and self.journal.state().open:
                # an earlier execution failed part-way in this process: undo what it left (in-flight
                # reassignments, throttle) and close its journal, as `kafka-balancer cancel` does
                from kafka_balancer.executor.cancel import cancel_execution

                cancel_execution(adapter, self.journal)
                self.say("the previous failed execution's leftovers were cancelled")
            ex = Executor(adapter, self.journal, self.options, say=self.say)
            rep = ex.run(plan) if plan is not None else ex.resume()
            result = {"state": "finished" if rep.verified else "failed", "verified": rep.verified,
                      "bytes_moved": rep.bytes_moved, "replica_moves": rep.replica_moves,
                      "leader_moves": rep.leader_moves, "problems": rep.problems[:20], "notes": rep.notes[:20],
                      "phase": rep.phase}
        except StopRequested:
            result = {"state": "stopped", "verified": False}
            try:
                from kafka_balancer.executor.cancel import cancel_execution

                assert adapter is not None
                adapter.stop_flag = threading.Event()
                res = cancel_execution(adapter, self.journal)
                result["cancelled"] = [f"{t}-{p}" for t, p in res.cancelled]
            except BalancerError as exc:
                result["problems"] = [f"cancel failed: {exc.message}"]
        except BalancerError as exc:
            result = {"state": "failed", "verified": False, "problems": [exc.message]}
        except Exception as exc:  # the service must outlive any failure of one execution
            result = {"state": "failed", "verified": False, "problems": [f"{type(exc).__name__}: {exc}"]}
        finally:
            if adapter is not None:
                with contextlib.suppress(Exception):
                    adapter.close()
            result["elapsed_s"] = round(time.monotonic() - t0, 2)
            result.setdefault("bytes_moved", self.progress().get("bytes_moved", 0))
            self.on_done(exec_id, result)
