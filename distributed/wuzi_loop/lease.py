"""One driver per storage. The running driver holds a lease, `loop.lock`:
its owner id, host, pid and a heartbeat time that a thread of the driver
renews. A second driver refuses to start while the lease is fresh, and a
driver whose lease another took over stops.

A lease, not a lock: object stores offer no create-if-absent that every
fsspec back end has, so two drivers started within the same moment could
both take it; the one whose lease was overwritten sees it at its next
renewal and stops. It guards against a `run` submitted twice, not against
a race of starts. Heartbeats compare the clocks of the drivers' machines,
which must agree to well within LEASE_SECONDS.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid

from . import layout
from .loop import LoopError
from .storage import NUMBER, Storage, StorageError, require_keys
from .tasks import process_is_gone

# A lease not renewed for this long is a dead driver's.
LEASE_SECONDS = 120.0
RENEW_SECONDS = 20.0


class Lease:
    def __init__(self, storage: Storage, renew_seconds: float = RENEW_SECONDS,
                 lease_seconds: float = LEASE_SECONDS):
        self.storage = storage
        self.renew_seconds = renew_seconds
        self.lease_seconds = lease_seconds
        self.owner = uuid.uuid4().hex
        self.host = socket.gethostname()
        self.pid = os.getpid()
        self.started = time.time()
        self.renewed = 0.0
        # The same on this machine's monotonic clock, which no clock
        # setting moves: what `check` measures the lease's age by.
        self.renewed_monotonic = 0.0
        self.lost: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def path(self) -> str:
        return self.storage.path(layout.LOCK)

    def read(self) -> dict | None:
        try:
            held = self.storage.read_json(layout.LOCK)
            if held is not None:
                require_keys(held, {"owner": str, "host": str, "pid": int, "heartbeat": NUMBER},
                             self.storage, layout.LOCK)
            return held
        except StorageError as error:
            raise LoopError(f"{error}\n(it is the running driver's lease: remove it if no driver "
                            f"runs on {self.storage.uri})") from None

    def record(self) -> dict:
        return {"owner": self.owner, "host": self.host, "pid": self.pid,
                "started": self.started, "heartbeat": time.time()}

    def acquire(self) -> None:
        held = self.read()
        if held is not None and held["owner"] != self.owner:
            age = time.time() - held["heartbeat"]
            # A driver killed on this machine need not be waited for.
            dead = held["host"] == self.host and process_is_gone(held["pid"])
            if age < self.lease_seconds and not dead:
                raise LoopError(
                    f"{self.storage.uri} is in use by another driver (pid {held['pid']} on {held['host']}; "
                    f"its lease {self.path} was renewed {max(age, 0):.0f} s ago): run one driver per "
                    f"storage. If that driver is dead, run again once its lease is "
                    f"{self.lease_seconds:.0f} s old, or remove {self.path}")
        self.storage.write_json(layout.LOCK, self.record())
        # Of two drivers that wrote at once, the later write stands: the
        # other one stops here rather than at its first renewal.
        back = self.read()
        if back is None or back["owner"] != self.owner:
            raise LoopError(f"another driver took {self.path} while this one started: "
                            f"run one driver per storage")
        self.renewed = time.time()
        self.renewed_monotonic = time.monotonic()
        self._thread = threading.Thread(target=self._renew, name="wuzi-lease", daemon=True)
        self._thread.start()

    def _renew(self) -> None:
        while not self._stop.wait(self.renew_seconds):
            if not self.renew_once():
                return

    def renew_once(self) -> bool:
        """One renewal: whether the lease is still this driver's."""
        try:
            held = self.read()
            if held is None or held["owner"] != self.owner:
                whom = "removed" if held is None else f"taken by pid {held['pid']} on {held['host']}"
                self.lost = f"this driver's lease {self.path} was {whom}"
                return False
            self.storage.write_json(layout.LOCK, self.record())
            self.renewed = time.time()
            self.renewed_monotonic = time.monotonic()
        except Exception as error:  # noqa: BLE001 - a storage hiccup; the lease may still hold
            if time.time() - self.renewed >= self.lease_seconds:
                self.lost = f"this driver could not renew its lease {self.path} for " \
                            f"{self.lease_seconds:.0f} s ({error})"
                return False
        return True

    def check(self) -> None:
        """Stops the driver (a LoopError) once its lease is lost: another
        driver may be writing the same storage. Also once half the lease has
        passed without a renewal that reached the storage (a renewal hung on
        a storage call sets nothing): another driver may take the lease
        when all of it has passed, and this one must have stopped writing
        before then."""
        if self.lost:
            raise LoopError(f"{self.lost}: stopping, another driver may be writing {self.storage.uri}")
        since = time.monotonic() - self.renewed_monotonic
        if self._thread is not None and since > self.lease_seconds / 2:
            raise LoopError(f"this driver's lease {self.path} was last renewed {since:.0f} s ago: "
                            f"stopping before another driver may take it (is the storage reachable?)")

    def release(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self.lost:
            return
        try:
            held = self.read()
            if held is not None and held["owner"] == self.owner:
                self.storage.remove(layout.LOCK)
        except Exception:  # noqa: BLE001 - an error here would hide the one that ended the run
            pass
