"""Storage by URI: a local folder, file://, or any fsspec file system
(s3://, gs://, az://, ... with its package installed).

Every object is written whole: on a local file system through a temporary
file and a rename, on an object store by a single PUT. A reader therefore
sees an object's old or new content, never half of it, and a worker killed
while writing leaves nothing broken behind.
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


class StorageError(Exception):
    """A storage URI that cannot be used; the message says why."""


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
            handle, temporary = tempfile.mkstemp(dir=folder, prefix=".partial-")
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
        else:
            self.fs.pipe_file(target, data)

    def write_json(self, name: str, value) -> None:
        self.write_bytes(name, (json.dumps(value, indent=1, sort_keys=True) + "\n").encode())

    def upload(self, local_path: str, name: str) -> None:
        target = self.path(name)
        if self.is_local:
            with open(local_path, "rb") as source:
                self.write_bytes(name, source.read())
        else:
            # An object store makes an upload visible only when it is
            # complete, multipart ones included.
            self.fs.put_file(local_path, target)

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

    def list(self, folder: str) -> list[str]:
        """Names (relative to the storage root) of the files directly in
        `folder`, sorted; none when it does not exist. Half-written local
        files are left out."""
        # Object-store file systems cache listings; other machines add files.
        self.fs.invalidate_cache(self.path(folder))
        try:
            entries = self.fs.ls(self.path(folder), detail=False)
        except FileNotFoundError:
            return []
        names = []
        prefix = self.root.rstrip("/") + "/"
        for entry in entries:
            entry = entry.rstrip("/")
            base = posixpath.basename(entry)
            if base.startswith(".partial-"):
                continue
            names.append(entry[len(prefix):] if entry.startswith(prefix) else posixpath.join(folder, base))
        return sorted(names)
