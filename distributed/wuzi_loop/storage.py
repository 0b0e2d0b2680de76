"""Storage by URI: a local folder, file://, or any fsspec file system
(s3://, gs://, az://, ... with its package installed).

Every object is written whole: on an object store by a single PUT, on any
other file system (a local folder, sftp, smb, hdfs, ...) through a temporary
file in the same folder and a rename. A reader therefore sees an object's
old or new content, never half of it, and a worker killed while writing
leaves nothing broken behind.
"""

from __future__ import annotations

import json
import os
import posixpath
import tempfile
import uuid

import fsspec
from fsspec.implementations.local import LocalFileSystem


# The loop's own files (JSON, parts of a few dozen games) are far smaller.
MAX_READ_BYTES = 64 << 20

# File systems whose writes and uploads become visible only when complete
# (one PUT). Any other one may show a half-written file, so it is written
# under a temporary name first. (memory:// replaces a whole entry at once.)
WHOLE_OBJECT_PROTOCOLS = frozenset({"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "oss", "memory"})

# Names of files being written; listings leave them out.
PARTIAL_PREFIX = ".partial-"


def partial_prefix(target: str) -> str:
    """How the temporary files of a write to `target` begin: the target's
    name is in it, so that the one writer of a file can remove what a
    killed attempt left (`Storage.remove_partials`)."""
    return f"{PARTIAL_PREFIX}{posixpath.basename(target)}."


class StorageError(Exception):
    """A storage URI that cannot be used; the message says why."""


# A JSON number: JSON's integers are Python ints, the others floats.
NUMBER = (int, float)

_TYPE_WORDS = {int: "a whole number", float: "a number", str: "a string", list: "a list",
               dict: "an object", bool: "true or false"}


def require_keys(stored, keys: dict[str, type | tuple[type, ...]], storage: Storage, name: str) -> dict:
    """`stored` (a JSON file's content) if it holds `keys`, each of its type;
    else an error naming the file and the key. Checked where the file is
    read, so that a damaged file stops the loop before work that would end
    in an unnamed TypeError."""
    def damaged(what: str) -> StorageError:
        return StorageError(f"{storage.path(name)} is damaged ({what}); restore it, or start the loop "
                            f"on another storage")

    if not isinstance(stored, dict):
        raise damaged(f"expected a JSON object with the keys {', '.join(keys)}, found {type(stored).__name__}")
    for key, kinds in keys.items():
        if key not in stored:
            raise damaged(f"no {key!r}")
        kinds = kinds if isinstance(kinds, tuple) else (kinds,)
        value = stored[key]
        # JSON true is a Python int too: only where a bool is wanted.
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            wanted = "a number" if set(kinds) == set(NUMBER) else \
                " or ".join(_TYPE_WORDS.get(kind, kind.__name__) for kind in kinds)
            raise damaged(f"{key!r} is {json.dumps(value)[:60]}, expected {wanted}")
    return stored


class Storage:
    def __init__(self, uri: str):
        self.uri = uri
        try:
            self.fs, self.root = fsspec.core.url_to_fs(uri)
        except ImportError as e:
            raise StorageError(
                f"storage {uri!r}: {e} (install the package it names into the venv, "
                f"e.g. .venv/bin/pip install s3fs==2026.9.0)"
            ) from None
        except (ValueError, KeyError) as e:
            raise StorageError(f"storage {uri!r}: {e}") from None
        self.root = self.root.rstrip("/") or "/"
        self.is_local = isinstance(self.fs, LocalFileSystem)
        if self.is_local:
            # The workers get this: a path relative to the driver's folder
            # would name another folder on a worker started elsewhere.
            self.uri = self.root
        protocols = self.fs.protocol if isinstance(self.fs.protocol, (tuple, list)) else (self.fs.protocol,)
        self.whole_object_writes = not self.is_local and bool(WHOLE_OBJECT_PROTOCOLS & set(protocols))
        if self.is_local:
            try:
                os.makedirs(self.root, exist_ok=True)
            except OSError as e:
                raise StorageError(f"storage {uri!r}: cannot create {self.root}: {e}") from None

    def path(self, name: str) -> str:
        return posixpath.join(self.root, name) if name else self.root

    def exists(self, name: str) -> bool:
        self.fs.invalidate_cache(posixpath.dirname(self.path(name)))
        return self.fs.exists(self.path(name))

    def read_bytes(self, name: str, limit: int = MAX_READ_BYTES) -> bytes:
        """A stored file's bytes; a file over `limit` bytes (not one the loop
        writes) is refused rather than read into memory."""
        size = self.fs.size(self.path(name))
        if size is not None and size > limit:
            raise StorageError(f"{self.path(name)}: {size} bytes, more than the {limit} the loop reads")
        return self.fs.cat_file(self.path(name))

    def read_json(self, name: str, default=None):
        try:
            data = self.read_bytes(name)
        except FileNotFoundError:
            return default
        try:
            return json.loads(data)
        except ValueError as e:  # invalid JSON or UTF-8
            raise StorageError(f"{self.path(name)} is damaged (not JSON: {e}); restore or remove it") from None

    def write_bytes(self, name: str, data: bytes) -> None:
        target = self.path(name)
        if self.is_local:
            folder = os.path.dirname(target)
            os.makedirs(folder, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=folder, prefix=partial_prefix(target))
            try:
                with os.fdopen(handle, "wb") as out:
                    out.write(data)
                    out.flush()
                    os.fsync(out.fileno())
                os.replace(temporary, target)
            except BaseException:
                if os.path.exists(temporary):
                    os.unlink(temporary)
                raise
        elif self.whole_object_writes:
            self.fs.pipe_file(target, data)
        else:
            self._write_then_rename(target, lambda temporary: self.fs.pipe_file(temporary, data))

    def _write_then_rename(self, target: str, write) -> None:
        """`write(temporary)` then a rename onto `target`: a crash leaves a
        partial file under a name that listings skip, never at `target`."""
        folder = posixpath.dirname(target)
        temporary = posixpath.join(folder, partial_prefix(target) + uuid.uuid4().hex)
        try:
            # A file system with folders (sftp, smb) does not make them on a write.
            self.fs.makedirs(folder, exist_ok=True)
            write(temporary)
            try:
                self.fs.mv(temporary, target)
            except OSError:
                # Some servers (SMB) refuse to rename onto an existing file:
                # then the target is missing for a moment, never partial.
                if not self.fs.exists(target):
                    raise
                self.fs.rm_file(target)
                self.fs.mv(temporary, target)
        except BaseException:
            try:
                if self.fs.exists(temporary):
                    self.fs.rm_file(temporary)
            except Exception:  # noqa: BLE001 - the first error is the one to report
                pass
            raise

    def write_json(self, name: str, value) -> None:
        # Strict JSON: a NaN or infinity is a bug to stop at, not a file
        # that jq and other readers refuse.
        try:
            text = json.dumps(value, indent=1, sort_keys=True, allow_nan=False)
        except ValueError as e:
            raise StorageError(f"{name}: not written, {e}") from e
        self.write_bytes(name, (text + "\n").encode())

    def upload(self, local_path: str, name: str) -> None:
        target = self.path(name)
        if self.is_local:
            with open(local_path, "rb") as source:
                self.write_bytes(name, source.read())
        elif self.whole_object_writes:
            # An object store makes an upload visible only when it is
            # complete, multipart ones included.
            self.fs.put_file(local_path, target)
        else:
            self._write_then_rename(target, lambda temporary: self.fs.put_file(local_path, temporary))

    def remove(self, name: str) -> None:
        """Deletes a stored file; one already gone is no error."""
        try:
            self.fs.rm_file(self.path(name))
        except FileNotFoundError:
            pass

    def download(self, name: str, local_path: str) -> None:
        os.makedirs(os.path.dirname(local_path) or ".", exist_ok=True)
        partial = f"{local_path}.{uuid.uuid4().hex}.partial"
        try:
            self.fs.get_file(self.path(name), partial)
            os.replace(partial, local_path)
        except BaseException:
            if os.path.exists(partial):
                os.unlink(partial)
            raise

    def remove_partials(self, folder: str, names_starting: str) -> int:
        """Removes the temporary files that killed writes of files in
        `folder` whose names begin with `names_starting` left behind, and
        says how many. Only for the one writer of those files: a write in
        progress loses its temporary file and fails."""
        removed = 0
        for entry in self._entries(folder):
            if posixpath.basename(entry).startswith(PARTIAL_PREFIX + names_starting):
                try:
                    self.fs.rm_file(entry)
                    removed += 1
                except FileNotFoundError:
                    pass
        return removed

    def _entries(self, folder: str) -> list[str]:
        """The paths directly in `folder` as the file system lists them;
        none when it does not exist."""
        # Object-store file systems cache listings; other machines add files.
        self.fs.invalidate_cache(self.path(folder))
        try:
            return [entry.rstrip("/") for entry in self.fs.ls(self.path(folder), detail=False)]
        except FileNotFoundError:
            return []

    def list(self, folder: str) -> list[str]:
        """Names (relative to the storage root) of the files directly in
        `folder`, sorted; none when it does not exist. Half-written local
        files are left out."""
        names = []
        prefix = self.root.rstrip("/") + "/"
        for entry in self._entries(folder):
            base = posixpath.basename(entry)
            if base.startswith(PARTIAL_PREFIX):
                continue
            names.append(entry[len(prefix):] if entry.startswith(prefix) else posixpath.join(folder, base))
        return sorted(names)
