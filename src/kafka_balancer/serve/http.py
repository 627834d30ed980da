"""Run the API with uvicorn, in the foreground (the CLI) or in a thread (the demo, tests)."""

from __future__ import annotations

import os
import secrets
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kafka_balancer.errors import ClusterError
from kafka_balancer.serve.config import ServeConfig


@dataclass
class Running:
    server: Any
    thread: threading.Thread
    port: int
    scheme: str

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}"

    def stop(self, timeout: float = 10.0) -> None:
        self.server.should_exit = True
        self.thread.join(timeout)


def write_token(cfg: ServeConfig) -> tuple[str | None, Path | None]:
    """The bearer token: the configured one, or (with no credentials configured at all) a random one
    written to ``<state_dir>/http-token`` (mode 0600) and never printed."""
    if cfg.token or (cfg.basic_user and cfg.basic_password):
        return cfg.token, None
    path = cfg.state_dir / "http-token"
    path.parent.mkdir(parents=True, exist_ok=True)
    tok = secrets.token_urlsafe(24)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(tok + "\n")
    return tok, path


def uvicorn_config(app: Any, cfg: ServeConfig, port: int | None = None) -> Any:
    import uvicorn

    kw: dict[str, Any] = {"host": cfg.host, "port": cfg.port if port is None else port, "log_level": "warning",
                          "access_log": False, "lifespan": "off"}
    if cfg.tls_cert is not None and cfg.tls_key is not None:
        kw["ssl_certfile"] = str(cfg.tls_cert)
        kw["ssl_keyfile"] = str(cfg.tls_key)
    return uvicorn.Config(app, **kw)


def start_in_thread(app: Any, cfg: ServeConfig, port: int | None = None, timeout_s: float = 20.0) -> Running:
    """Start uvicorn in a daemon thread; ``port`` 0 picks a free one. Returns once it listens."""
    import uvicorn

    server = uvicorn.Server(uvicorn_config(app, cfg, port))
    t = threading.Thread(target=server.run, name="serve-http", daemon=True)
    t.start()
    deadline = time.monotonic() + timeout_s
    while not server.started:
        if not t.is_alive() or time.monotonic() > deadline:
            raise ClusterError(f"the HTTP server did not start on {cfg.host}:{cfg.port if port is None else port}",
                               hint="is the port free? pick another with --port")
        time.sleep(0.05)
    sock = server.servers[0].sockets[0]
    return Running(server, t, int(sock.getsockname()[1]), "https" if cfg.tls_cert else "http")
