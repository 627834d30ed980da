"""Settings of ``kafka-balancer serve``: a TOML file (``--config balancer.toml``) under command-line overrides.

Every key is optional; an unknown key or a bad value is an :class:`InputError` naming the key and file::

    bootstrap = "kafka-1:9093"
    command_config = "client.properties"   # TLS/SASL client settings, read by the security package
    port = 8080
    self_healing = ["broker_failure", "new_brokers"]   # or "all"; none by default
    grace = "2m"
    broker_history = "336h"   # how long brokers removed or demoted through the API stay out of plans

    [http]
    token = "..."            # bearer token for write endpoints (or user/password for basic auth)

    [capacity]               # per broker, units of docs/snapshot-format.md
    disk = 5e11

Durations take ``ms``, ``s``, ``m`` or ``h`` (``2m``); sizes ``1.5GB``/``500MB`` or plain bytes.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from kafka_balancer.errors import InputError
from kafka_balancer.model.snapshot import RESOURCES
from kafka_balancer.pipeline.config import DEFAULT_CAPACITY
from kafka_balancer.serve.broker_history import DEFAULT_RETENTION_S
from kafka_balancer.validate.values import list_items, parse_duration_s
from kafka_balancer.validate.values import parse_size as parse_size_bytes

ANOMALY_TYPES: tuple[str, ...] = ("broker_failure", "new_brokers", "goal_violation", "disk", "leaders")


@dataclass(frozen=True)
class ServeConfig:
    bootstrap: str | None = None
    command_config: Path | None = None
    local_cluster: Path | None = None
    host: str = "127.0.0.1"
    port: int = 8080
    state_dir: Path = Path("out/serve")
    # HTTP auth and TLS
    token: str | None = field(default=None, repr=False)
    basic_user: str | None = None
    basic_password: str | None = field(default=None, repr=False)
    tls_cert: Path | None = None
    tls_key: Path | None = None
    # sampling and the load model
    interval_s: float = 10.0
    window_s: float = 60.0
    windows: int = 3
    capacity: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_CAPACITY))
    theta: float = 0.8
    eps: float = 0.1
    # the planner's goal policy (planner/policy.py); seed 001's two goals by default
    goals: tuple[str, ...] = ("capacity", "distribution")
    # topics whose partitions never move (a regular expression on whole names), in every plan of the service:
    # self-healing and operator actions alike (a request may give its own)
    exclude_topics: str | None = None
    # detectors
    self_healing: frozenset[str] = frozenset()
    grace_s: float = 120.0
    goal_violation_windows: int = 3
    new_broker_windows: int = 1
    # how long the service remembers brokers the operator removed or demoted (serve/broker_history.py)
    broker_history_s: float = DEFAULT_RETENTION_S
    # guards
    cooldown_s: float = 300.0
    max_bytes_per_hour: float = 50e9
    dry_run: bool = False
    # executor
    throttle: int = 50_000_000
    plan_time_limit_s: float = 60.0

    @property
    def journal_path(self) -> Path:
        return self.state_dir / "executor" / "journal.jsonl"

    def write_auth_configured(self) -> bool:
        return bool(self.token) or bool(self.basic_user and self.basic_password)

    def public(self) -> dict[str, Any]:
        """The settings without secrets (for /api/state and logs)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name in ("token", "basic_password"):
                v = "***" if v else None
            elif isinstance(v, Path):
                v = str(v)
            elif isinstance(v, frozenset):
                v = sorted(v)
            out[f.name] = v
        return out


def parse_duration(text: str | float | int, name: str) -> float:
    """Seconds from ``2m``, ``90s``, ``500ms``, ``1h`` or a plain number of seconds (``validate.values``).

    >>> parse_duration("2m", "--grace")
    120.0
    """
    if isinstance(text, bool) or not isinstance(text, str | int | float):
        raise InputError(f"{name} must be a duration such as 2m, got {text!r}", hint="use ms, s, m or h")
    return parse_duration_s(str(text), name, allow_zero=True)


def parse_size(text: str | float | int, name: str) -> float:
    """Bytes from ``50GB``, ``500M``, ``10MiB``, ``1e9`` (``validate.values``).

    >>> parse_size("1.5G", "max_bytes_per_hour")
    1500000000.0
    """
    if isinstance(text, bool) or not isinstance(text, str | int | float):
        raise InputError(f"{name} must be a size such as 50G, got {text!r}")
    if isinstance(text, float):
        text = int(text) if math.isfinite(text) and text == int(text) else text
    t = str(text).strip()
    if t.lower().endswith("b") and not t.lower().endswith("ib") and len(t) > 1 and not t[-2].isdigit():
        t = t[:-1]  # "50GB" reads as "50G"
    return float(parse_size_bytes(t, name))


def parse_self_healing(value: str | list[Any], name: str = "--self-healing") -> frozenset[str]:
    """``all``, a comma-separated list or a TOML list of anomaly types; ``none`` or empty = off."""
    hint = f"use 'all' or some of {','.join(ANOMALY_TYPES)}"
    if isinstance(value, list):
        items = [x for x in (str(v).strip() for v in value) if x]
    else:  # a doubled comma or a lone ',' is refused (serve would otherwise run with no self-healing at all)
        items = list_items(str(value), name, hint) if str(value).strip() else []
    if items in (["all"],):
        return frozenset(ANOMALY_TYPES)
    if items in ([], ["none"]):
        return frozenset()
    bad = [x for x in items if x not in ANOMALY_TYPES]
    if bad:
        raise InputError(f"{name}: unknown anomaly type {bad[0]!r}", hint=hint)
    return frozenset(items)


def _num(v: Any, key: str, *, lo: float | None = None, hi: float | None = None, integer: bool = False) -> Any:
    if isinstance(v, bool) or not isinstance(v, int | float) or (integer and not isinstance(v, int)):
        raise InputError(f"{key} must be {'an integer' if integer else 'a number'}, got {v!r}")
    if not math.isfinite(float(v)) or (lo is not None and v < lo) or (hi is not None and v > hi):
        raise InputError(f"{key} must be between {lo if lo is not None else '-inf'} and "
                         f"{hi if hi is not None else 'inf'}, got {v!r}")
    return v


def _str(v: Any, key: str) -> str:
    if not isinstance(v, str) or not v:
        raise InputError(f"{key} must be a non-empty string, got {v!r}")
    return v


def _apply(cfg: ServeConfig, key: str, v: Any, where: str) -> ServeConfig:
    """One setting from the file (``key`` is dotted for tables) onto ``cfg``."""
    k = f"{where}: {key}"
    simple_paths = {"command_config", "local_cluster", "state_dir", "http.tls_cert", "http.tls_key"}
    if key in simple_paths:
        return replace(cfg, **{key.split(".")[-1]: Path(_str(v, k))})  # type: ignore[arg-type]
    match key:
        case "bootstrap" | "http.host":
            return replace(cfg, **{key.split(".")[-1]: _str(v, k)})  # type: ignore[arg-type]
        case "port" | "http.port":
            return replace(cfg, port=int(_num(v, k, lo=0, hi=65535, integer=True)))
        case "http.token":
            return replace(cfg, token=_str(v, k))
        case "http.user":
            return replace(cfg, basic_user=_str(v, k))
        case "http.password":
            return replace(cfg, basic_password=_str(v, k))
        case "interval" | "model.interval":
            return replace(cfg, interval_s=max(parse_duration(v, k), 0.5))
        case "window" | "model.window":
            return replace(cfg, window_s=max(parse_duration(v, k), 1.0))
        case "windows" | "model.windows":
            return replace(cfg, windows=int(_num(v, k, lo=1, hi=1000, integer=True)))
        case "theta" | "goals.theta":
            return replace(cfg, theta=float(_num(v, k, lo=0.01, hi=1.0)))
        case "eps" | "goals.eps":
            return replace(cfg, eps=float(_num(v, k, lo=0.001, hi=10.0)))
        case "goals" | "goals.goals":
            from kafka_balancer.planner.policy import parse_goals

            text = ",".join(str(x) for x in v) if isinstance(v, list) else _str(v, k)
            return replace(cfg, goals=tuple(parse_goals(text)))
        case "exclude_topics" | "goals.exclude_topics":
            from kafka_balancer.validate.values import parse_regex

            text = _str(v, k)
            parse_regex(text, k)
            return replace(cfg, exclude_topics=text)
        case "self_healing" | "healing.self_healing":
            return replace(cfg, self_healing=parse_self_healing(v, k))
        case "grace" | "healing.grace":
            return replace(cfg, grace_s=parse_duration(v, k))
        case "goal_violation_windows" | "healing.goal_violation_windows":
            return replace(cfg, goal_violation_windows=int(_num(v, k, lo=1, hi=1000, integer=True)))
        case "new_broker_windows" | "healing.new_broker_windows":
            return replace(cfg, new_broker_windows=int(_num(v, k, lo=0, hi=1000, integer=True)))
        case "broker_history" | "healing.broker_history":
            return replace(cfg, broker_history_s=parse_duration(v, k))
        case "cooldown" | "guards.cooldown":
            return replace(cfg, cooldown_s=parse_duration(v, k))
        case "max_bytes_per_hour" | "guards.max_bytes_per_hour":
            return replace(cfg, max_bytes_per_hour=parse_size(v, k))
        case "dry_run" | "guards.dry_run":
            if not isinstance(v, bool):
                raise InputError(f"{k} must be true or false, got {v!r}")
            return replace(cfg, dry_run=v)
        case "throttle" | "executor.throttle":
            return replace(cfg, throttle=int(parse_size(v, k)) if v != 0 else 0)
        case "plan_time_limit" | "executor.plan_time_limit":
            return replace(cfg, plan_time_limit_s=max(parse_duration(v, k), 1.0))
    if key.startswith("capacity."):
        res = key.split(".", 1)[1]
        if res not in RESOURCES:
            raise InputError(f"{k}: unknown resource", hint=f"capacity takes {', '.join(RESOURCES)}")
        return replace(cfg, capacity={**cfg.capacity, res: float(_num(v, k, lo=1e-9))})
    raise InputError(f"{k}: unknown setting", hint="see docs/serve.md for the settings")


def _flatten(doc: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for k, v in doc.items():
        if isinstance(v, dict):
            out += _flatten(v, f"{prefix}{k}.")
        else:
            out.append((f"{prefix}{k}", v))
    return out


def load_config(path: Path | None, base: ServeConfig | None = None) -> ServeConfig:
    """The settings of ``path`` (TOML) over ``base``; no path: ``base`` (or the defaults)."""
    cfg = base or ServeConfig()
    if path is None:
        return cfg
    try:
        doc = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"--config {path}: no such file", hint="pass the path of a TOML file") from None
    except OSError as exc:
        raise InputError(f"--config {path}: cannot read it ({exc.strerror})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"--config {path}: not valid TOML ({exc})") from None
    for key, v in _flatten(doc):
        cfg = _apply(cfg, key, v, str(path))
    return cfg


def check(cfg: ServeConfig) -> ServeConfig:
    """Cross-field checks once every source is applied."""
    if not cfg.bootstrap and cfg.local_cluster is None:
        raise InputError("serve needs a cluster: --bootstrap HOST:PORT or --local-cluster DIR",
                         hint="or set bootstrap in the --config file")
    if cfg.bootstrap:
        from kafka_balancer.validate.values import parse_bootstrap

        cfg = replace(cfg, bootstrap=parse_bootstrap(cfg.bootstrap, "bootstrap"))
    if cfg.window_s < cfg.interval_s:
        raise InputError(f"window ({cfg.window_s:g} s) must be at least the sampling interval ({cfg.interval_s:g} s)")
    if (cfg.tls_cert is None) != (cfg.tls_key is None):
        raise InputError("http.tls_cert and http.tls_key go together", hint="set both, or neither for plain HTTP")
    if bool(cfg.basic_user) != bool(cfg.basic_password):
        raise InputError("http.user and http.password go together")
    return cfg
