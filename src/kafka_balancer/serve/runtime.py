"""Wiring: the service, its HTTP server, and the cluster they point at (``--bootstrap`` or
``--local-cluster``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kafka_balancer.serve.config import ServeConfig
from kafka_balancer.serve.http import Running, start_in_thread, uvicorn_config, write_token
from kafka_balancer.serve.service import Service


@dataclass
class Started:
    service: Service
    http: Running
    token: str | None

    def stop(self) -> None:
        self.http.stop()
        self.service.shutdown()


def build_service(cfg: ServeConfig, model_source: str = "pipeline",
                  say: Callable[[str], None] | None = None) -> tuple[Service, ServeConfig]:
    from kafka_balancer.security.settings import load_settings

    metrics: dict[int, str] = {}
    hosts: dict[int, str] = {}
    security: Any = load_settings(cfg.command_config) if cfg.command_config is not None else None
    if cfg.local_cluster is not None:
        from kafka_balancer.localcluster.cluster import open_cluster

        lc = open_cluster(cfg.local_cluster)
        cfg = dataclasses.replace(cfg, bootstrap=cfg.bootstrap or lc.bootstrap)
        metrics, hosts = lc.metrics_urls(), lc.hosts()
        if security is None:
            security = lc.security("admin")  # a secured local cluster lends its admin's settings
    return Service(cfg, metrics_urls=metrics, hosts=hosts, say=say, model_source=model_source,
                   security=security), cfg


def start(cfg: ServeConfig, model_source: str = "pipeline", port: int | None = None,
          say: Callable[[str], None] | None = None) -> Started:
    """Service and HTTP server in background threads (the demo and the tests)."""
    from kafka_balancer.serve.api import create_app

    service, cfg = build_service(cfg, model_source, say)
    token, _path = write_token(cfg)
    basic = (cfg.basic_user, cfg.basic_password) if cfg.basic_user and cfg.basic_password else None
    app = create_app(service, token, basic)
    service.start()
    http = start_in_thread(app, cfg, port)
    return Started(service, http, token)


def run_forever(cfg: ServeConfig, model_source: str = "pipeline", say: Callable[[str], None] | None = None) -> int:
    """The CLI: the HTTP server in the foreground until Ctrl-C or SIGTERM."""
    import uvicorn

    from kafka_balancer.serve.api import create_app

    say = say or (lambda m: None)
    service, cfg = build_service(cfg, model_source, say)
    token, path = write_token(cfg)
    basic = (cfg.basic_user, cfg.basic_password) if cfg.basic_user and cfg.basic_password else None
    app: Any = create_app(service, token, basic)
    service.start()
    scheme = "https" if cfg.tls_cert else "http"
    say(f"serving {cfg.bootstrap}: dashboard and API at {scheme}://{cfg.host}:{cfg.port}/ "
        f"(self-healing: {','.join(sorted(cfg.self_healing)) or 'off'}{'; dry-run' if cfg.dry_run else ''})")
    if path is not None:
        say(f"write endpoints: bearer token in {path} (no credentials were configured)")
    try:
        uvicorn.Server(uvicorn_config(app, cfg)).run()
    finally:
        service.shutdown()
    return 0
