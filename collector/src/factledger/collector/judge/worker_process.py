"""A worker process that assembles and judges turns, so judging gets a core of its own.

One Python process shares one GIL between receiving, storing and judging; judging is the
largest share. The worker runs a `TurnJudge` (the judging core, `processors.judging.core`,
with the service's row shaping) in a child process. The parent keeps every
store access (chDB allows one process per data path): it sends the worker spans it has
stored and inserts the rows that come back.

    parent (pipeline's turn processor)              worker process
      send(spans) ──── pipe ────▶ reader thread ──▶ inbox ──▶ TurnJudge.judge
      receive()   ◀─── pipe ──── writer thread ◀── Judged (rows, counts, spans) ◀─┘

The child is a fresh interpreter (`python -c`), never a fork: forking a process that has
the embedded ClickHouse open would copy its threads' locks mid-state. It is started
directly rather than through multiprocessing's spawn, which re-runs the parent's
`__main__` in the child (a CLI script, a test runner's or Streamlit's). The two talk over
a pair of pipes with pickled messages, the configuration first. A reader thread in the
child always drains the parent's pipe (messages wait in the child, still pickled), so the
parent's sends never wait for judging and the two processes cannot block on each other's
full pipe; a writer thread sends the results, so judging never waits for the parent to
read them. The child exits when the parent closes its end or goes away (even after
kill -9), and ignores SIGINT and SIGTERM (a Ctrl-C or a service manager signals the whole
process group): the parent decides when it stops, after the open turns are judged.

Exceptions::

    WorkerDied    the worker process is gone, or did not start; make a new one
"""

from __future__ import annotations

import logging
import os
import pickle
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait

from factledger.collector.gc_tuning import tune_collector
from factledger.collector.judge.quarantine import QuarantiningRunner, TurnNote
from factledger.collector.judge.time_limit import DEFAULT_TURN_SECONDS, TimeLimitedRunner
from factledger.collector.judge.turn_judge import Count, Judged, TurnJudge
from factledger.collector.redaction import Redactor
from factledger.processors.assembly.assembler import PriorVerdict
from factledger.processors.errors import FactLedgerError
from factledger.processors.judging.core import Settlement
from factledger.processors.runner import ValidationRunner
from factledger.processors.spans import SpanRecord

log = logging.getLogger("factledger.judge_worker")

_TICK_SECONDS = 0.05
"""How often an idle worker looks for turns whose grace period has passed."""
_HEARTBEAT_SECONDS = 1.0
"""An idle worker says it is alive this often (the service replaces a silent one)."""
_STOP_SECONDS = 5.0


class WorkerDied(FactLedgerError):
    """The worker process is gone, or did not start."""


@dataclass(frozen=True)
class WorkerConfig:
    """What the worker needs to judge as the pipeline would (pickled to the child)."""

    runner: ValidationRunner
    grace_seconds: float
    max_wait_seconds: float
    redactor: Redactor | None = None
    """Applied to the turns and verdicts stored, as in the in-thread mode."""
    turn_seconds: float = DEFAULT_TURN_SECONDS
    """Judging one turn may take this long; then the validator that overran is recorded
    as a `validator_error` and the turn is stored with the other findings."""
    quarantined: frozenset[str] = frozenset()
    """Turn ids not to validate: validating them stopped an earlier worker."""
    verify: bool = False
    """Ask the verification stage about the names of each verdict (`TurnJudge`)."""


@dataclass(frozen=True)
class _Spans:
    spans: tuple[SpanRecord, ...]


@dataclass(frozen=True)
class _Recall:
    """Verdicts stored before the worker started, ahead of the spans read back with them."""

    priors: tuple[PriorVerdict, ...]


@dataclass(frozen=True)
class _Settle:
    """Verified turns to judge again under their next version."""

    settlements: tuple[Settlement, ...]


@dataclass(frozen=True)
class _Flush:
    """Judge every open turn now."""


@dataclass(frozen=True)
class _Hello:
    """The worker is up and reading."""


class JudgeWorker:
    """The parent's handle on one worker process. Used by one thread at a time.

    `inflight` counts spans sent and not yet reported back as taken in: if the worker
    dies, those are the spans whose turns the pipeline must recover from the store.
    """

    def __init__(self, config: WorkerConfig) -> None:
        self._config = config
        self._process: subprocess.Popen[bytes] | None = None
        self._to_worker: Connection | None = None
        self._from_worker: Connection | None = None
        # The turn the worker is validating, for the service to quarantine if it hangs.
        self._note_file = tempfile.TemporaryFile()  # noqa: SIM115 (lives with the handle)
        self._note = TurnNote(self._note_file.fileno())
        self.inflight = 0
        self.started_at = 0.0
        """`time.monotonic()` when the worker became ready."""
        self._heard_at = 0.0

    def silent_for(self) -> float:
        """Seconds since the worker was last heard (a result, or the heartbeat it sends
        every second while idle) or the parent last came back to listen. Long silence
        means the worker's judging is stuck. Safe to read from another thread."""
        return time.monotonic() - self._heard_at

    def judging(self) -> str:
        """The id of the turn the worker is validating now; empty between turns."""
        return self._note.read()

    def listening(self) -> None:
        """Silence counts from now: the parent listens again after other work, or saw the
        worker's turn note change (it is moving, if slowly)."""
        self._heard_at = max(self._heard_at, time.monotonic())

    def kill(self) -> None:
        """End the process at once (it does not answer); the next call raises WorkerDied."""
        if self._process is not None and self._process.poll() is None:
            self._process.kill()

    def start(self, timeout: float = 60.0) -> None:
        """Start the process and wait until it reads. Raises WorkerDied."""
        inbox_out, inbox_in = os.pipe()
        outbox_out, outbox_in = os.pipe()
        note = self._note_file.fileno()
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-c", _CHILD, str(inbox_out), str(outbox_in), str(note)],
                pass_fds=(inbox_out, outbox_in, note),
                stdin=subprocess.DEVNULL,
            )
        except OSError as exc:
            for fd in (inbox_out, inbox_in, outbox_out, outbox_in):
                os.close(fd)
            raise WorkerDied(f"the judging worker could not be started: {exc}") from exc
        # The child holds its own copies; closing ours lets each side see the other's end.
        os.close(inbox_out)
        os.close(outbox_in)
        self._to_worker = Connection(inbox_in, readable=False)
        self._from_worker = from_worker = Connection(outbox_out, writable=False)
        try:
            self._send(self._config)
            ready = from_worker.poll(timeout) and isinstance(from_worker.recv(), _Hello)
        except (WorkerDied, EOFError, OSError):
            ready = False
        if not ready:
            self.stop(0)
            raise WorkerDied(f"the judging worker did not start within {timeout}s")
        self.started_at = self._heard_at = time.monotonic()

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def exitcode(self) -> int | None:
        return self._process.poll() if self._process is not None else None

    def send(self, spans: Sequence[SpanRecord], chunk: int = 500) -> int:
        """Hand stored spans to the worker, `chunk` at a time (it looks for due turns
        between two, so a big batch never delays a verdict). Returns how many spans were
        not sent because they do not pickle (the caller counts them as dropped). Raises
        WorkerDied; every other span given counts as in flight even then."""
        self.inflight += len(spans)
        unsent = 0
        for start in range(0, len(spans), chunk):
            part = tuple(spans[start : start + chunk])
            try:
                data = pickle.dumps(_Spans(part), protocol=pickle.HIGHEST_PROTOCOL)
            except Exception:  # cannot happen for decoded spans; never stall on it
                log.exception("%d spans do not pickle; not judged", len(part))
                self.inflight -= len(part)
                unsent += len(part)
                continue
            self._send_bytes(data)
        return unsent

    def recall(self, priors: Sequence[PriorVerdict]) -> None:
        """Hand the worker stored verdicts to go on from (`TurnJudge.recall`), before the
        spans read back with them. Raises WorkerDied."""
        self._send(_Recall(tuple(priors)))

    def settle(self, settlements: Sequence[Settlement]) -> None:
        """Hand the worker what verification answered (`TurnJudge.settle`). Raises
        WorkerDied."""
        self._send(_Settle(tuple(settlements)))

    def request_flush(self) -> None:
        """Ask the worker to judge every open turn; a `Judged` with `flushed` answers,
        after the results of every span sent before. Raises WorkerDied."""
        self._send(_Flush())

    def receive(self, timeout: float) -> list[Judged]:
        """The results that arrive within `timeout` (all that are waiting, without more
        waiting once one is there). Raises WorkerDied."""
        connection = self._from_worker
        if connection is None:
            raise WorkerDied("the judging worker is stopped")
        results: list[Judged] = []
        try:
            while connection.poll(0 if results else timeout):
                result = connection.recv()
                if isinstance(result, Judged):
                    self.inflight -= result.assembled
                    self._heard_at = time.monotonic()
                    results.append(result)
        except (EOFError, OSError) as exc:
            if results:  # hand over what did arrive; the next call reports the death
                return results
            raise WorkerDied(f"the judging worker is gone ({exc!r})") from exc
        except Exception as exc:  # a result that does not unpickle: the worker is broken
            raise WorkerDied(f"the judging worker sent an unreadable result ({exc!r})") from exc
        return results

    def stop(self, timeout: float = _STOP_SECONDS) -> None:
        """Close the pipe (the worker exits when it sees that) and wait for the process;
        kill it past `timeout`. Idempotent."""
        to_worker, self._to_worker = self._to_worker, None
        if to_worker is not None:
            to_worker.close()
        process = self._process
        if process is not None:
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(_STOP_SECONDS)
        from_worker, self._from_worker = self._from_worker, None
        if from_worker is not None:
            from_worker.close()
        # The note file stays open while this handle lives: the watch thread may still
        # read it, and a closed descriptor's number can be reused.

    def _send(self, message: object) -> None:
        self._send_bytes(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))

    def _send_bytes(self, data: bytes) -> None:
        connection = self._to_worker
        if connection is None:
            raise WorkerDied("the judging worker is stopped")
        try:
            connection.send_bytes(data)
        except (OSError, EOFError, ValueError) as exc:
            raise WorkerDied(f"the judging worker is gone ({exc!r})") from exc


def answering(workers: Sequence[JudgeWorker], timeout: float) -> list[JudgeWorker]:
    """The workers with results to `receive` (or that are gone), waiting up to `timeout`
    for the first: one wait for them all, however many there are."""
    connections: dict[int, JudgeWorker] = {}
    for worker in workers:
        connection = worker._from_worker
        if connection is None:
            return [worker]  # stopped: its `receive` raises WorkerDied at once
        connections[connection.fileno()] = worker
    ready = wait([w._from_worker for w in connections.values() if w._from_worker], timeout)
    return [connections[c.fileno()] for c in ready if isinstance(c, Connection)]


# --- the child process ---------------------------------------------------------------------

_CHILD = (
    "import sys; from factledger.collector.judge.worker_process import main; main(sys.argv[1:])"
)


def main(argv: Sequence[str]) -> None:
    """The worker process's entry: the two pipe ends and the turn note file it was given,
    by descriptor."""
    inbox = Connection(int(argv[0]), writable=False)
    outbox = Connection(int(argv[1]), readable=False)
    note = TurnNote(int(argv[2]))
    try:
        config = inbox.recv()
    except (EOFError, OSError):
        return
    if isinstance(config, WorkerConfig):
        serve(inbox, outbox, config, note)


def serve(inbox: Connection, outbox: Connection, config: WorkerConfig, note: TurnNote) -> None:
    """The worker process: judge what arrives until the parent closes the pipe."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    judge = TurnJudge(
        QuarantiningRunner(
            TimeLimitedRunner(config.runner, config.turn_seconds), note, config.quarantined
        ),
        grace_seconds=config.grace_seconds,
        max_wait_seconds=config.max_wait_seconds,
        redactor=config.redactor,
        verify=config.verify,
        grade=config.runner.graded,
    )
    tune_collector()
    # Messages wait pickled: a backlog of spans takes about 60% of the memory it would
    # as objects (2.9 against 4.9 KB per span of the ingest benchmark).
    messages: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
    threading.Thread(target=_read, args=(inbox, messages), daemon=True).start()
    # Results leave through a thread of their own: a result bigger than the pipe's buffer
    # would otherwise hold judging until the parent has inserted the one before.
    results: queue.SimpleQueue[bytes] = queue.SimpleQueue()
    outbox.send(_Hello())
    threading.Thread(target=_write, args=(outbox, results), daemon=True).start()
    last_sent = time.monotonic()
    while True:
        message: object = None  # none within a tick: look for due turns all the same
        try:
            data = messages.get(timeout=_TICK_SECONDS)
        except queue.Empty:
            pass
        else:
            if data is None:
                return
            try:
                message = pickle.loads(data)
            except Exception:  # unreadable: exit, the parent restarts the worker
                log.exception("a message from the parent does not unpickle")
                return
        result = _step(judge, message)
        # Sent from this thread, the one that judges: silence means judging is stuck.
        if not result.empty or time.monotonic() - last_sent >= _HEARTBEAT_SECONDS:
            results.put(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
            last_sent = time.monotonic()


_WORKER_ERROR = Count("factledger_worker_errors_total", 1, (("worker", "turn-processor"),))


def _step(judge: TurnJudge, message: object) -> Judged:
    if isinstance(message, _Recall):
        judge.recall(message.priors)
    if isinstance(message, _Settle):
        try:
            return judge.settle(message.settlements)
        except Exception:  # the worker must outlive any single batch
            log.exception("settling %d verified turns failed", len(message.settlements))
            return Judged(assembled=0, counts=[_WORKER_ERROR], open_turns=judge.open_turns)
    spans = message.spans if isinstance(message, _Spans) else ()
    try:
        return judge.judge(spans, flush=isinstance(message, _Flush))
    except Exception:  # the worker must outlive any single batch
        log.exception("judging a batch of %d spans failed", len(spans))
        return Judged(
            assembled=len(spans),
            counts=[_WORKER_ERROR],
            open_turns=judge.open_turns,
            flushed=isinstance(message, _Flush),
        )


def _write(outbox: Connection, results: queue.SimpleQueue[bytes]) -> None:
    """Send results in order; when the parent is gone, stop (the reader sees it too)."""
    try:
        while True:
            outbox.send_bytes(results.get())
    except OSError:
        pass


def _read(inbox: Connection, messages: queue.SimpleQueue[bytes | None]) -> None:
    """Drain the parent's pipe; None once it is closed."""
    try:
        while True:
            messages.put(inbox.recv_bytes())
    except (EOFError, OSError):
        pass
    messages.put(None)
