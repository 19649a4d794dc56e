"""A real `redis-server` (Debian package redis-server) on a free loopback port, for tests and benchmarks.

Nothing is written to disk (no RDB snapshot, no append-only file); the server is stopped
(SIGTERM, then SIGKILL) when the `with` block ends.

    with RedisServer() as server:
        server.url  # redis://127.0.0.1:PORT/0
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path


def redis_binary() -> str | None:
    """Where redis-server is, or None when it is not installed."""
    return shutil.which("redis-server") or next(
        (str(p) for p in (Path("/usr/bin/redis-server"), Path("/usr/sbin/redis-server")) if p.exists()), None
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RedisServer:
    """One redis-server process.

    Args:
        password: require this password (`requirepass`); None: none.
    """

    def __init__(self, password: str | None = None) -> None:
        binary = redis_binary()
        if binary is None:
            raise FileNotFoundError("redis-server is not installed (Debian package redis-server)")
        self.binary = binary
        self.password = password
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        args = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        args += ["--daemonize", "no", "--loglevel", "warning"]
        if self.password:
            args += ["--requirepass", self.password]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().decode(errors="replace") if self.proc.stderr else ""
                raise RuntimeError(f"redis-server exited at once: {err.strip()[:300]}")
            if self._pong():
                return self
            time.sleep(0.02)
        self.stop()
        raise RuntimeError("redis-server did not answer PING within 15 s")

    def _pong(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                if self.password:
                    s.sendall(f"AUTH {self.password}\r\n".encode())
                    s.recv(64)
                s.sendall(b"PING\r\n")
                return s.recv(64).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self) -> None:
        proc = self.proc
        if proc is None:
            return
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)
        if proc.stderr is not None:
            proc.stderr.close()

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
