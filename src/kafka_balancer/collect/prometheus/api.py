"""A small client for Prometheus's HTTP API (``/api/v1/...``): it talks to the one server the user
named and to nothing else (redirects are refused), with errors a user can act on."""

from __future__ import annotations

import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from typing import Any

import orjson

from kafka_balancer.errors import ClusterError, InputError


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> None:
        raise urllib.error.HTTPError(req.full_url, code, f"redirect to {newurl} refused", headers, fp)


def check_url(url: str) -> str:
    """``http(s)://host:port[/prefix]`` without query or credentials; returns it without a trailing slash."""
    u = urllib.parse.urlsplit(url.strip())
    if u.scheme not in ("http", "https") or not u.hostname or u.query or u.fragment:
        raise InputError(f"bad --prometheus {url!r}: expected http(s)://host:port[/path]",
                         hint="e.g. --prometheus http://127.0.0.1:9090")
    if u.username or u.password:
        raise InputError("--prometheus: credentials in the URL are not supported (they would show in logs)",
                         hint="give the URL of a Prometheus server (or a proxy) that needs none")
    return url.strip().rstrip("/")


class PromClient:
    def __init__(self, url: str, timeout_s: float = 60.0) -> None:
        self.url = check_url(url)
        self.timeout_s = timeout_s
        self._opener = urllib.request.build_opener(_NoRedirect())
        self.requests = 0
        self.bytes = 0

    def _call(self, path: str, params: Sequence[tuple[str, str]], post: bool = True) -> Any:
        body = urllib.parse.urlencode(list(params))
        if post:
            req = urllib.request.Request(self.url + path, data=body.encode(), method="POST",
                                         headers={"Content-Type": "application/x-www-form-urlencoded"})
        else:
            req = urllib.request.Request(f"{self.url}{path}?{body}", method="GET")
        try:
            with self._opener.open(req, timeout=self.timeout_s) as r:
                raw = r.read()
        except urllib.error.HTTPError as exc:
            detail = ""
            try:
                detail = str(orjson.loads(exc.read()).get("error", ""))
            except Exception:  # any unreadable body: the status line says enough
                detail = str(exc.reason)
            if exc.code == 400 or exc.code == 422:
                raise InputError(f"Prometheus at {self.url} refused {path}: {detail}",
                                 hint="check --prometheus-mapping's selector and metric names") from None
            raise ClusterError(f"Prometheus at {self.url} answered {exc.code} to {path}: {detail}",
                               hint="check that --prometheus is the server's base URL "
                               "(the one whose /api/v1/query works)") from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise ClusterError(f"cannot reach Prometheus at {self.url} ({reason})",
                               hint="check --prometheus URL and that the server runs") from None
        self.requests += 1
        self.bytes += len(raw)
        try:
            doc = orjson.loads(raw)
        except orjson.JSONDecodeError:
            raise ClusterError(f"{self.url}{path} did not answer JSON: is --prometheus a Prometheus server?",
                               hint="give the server's base URL, e.g. http://127.0.0.1:9090") from None
        if doc.get("status") != "success":
            raise ClusterError(f"Prometheus at {self.url}: {path} failed: {doc.get('error', doc)}")
        return doc["data"]

    def query(self, promql: str, at_s: float) -> list[dict[str, Any]]:
        data = self._call("/api/v1/query", [("query", promql), ("time", f"{at_s:.3f}")])
        out: list[dict[str, Any]] = data.get("result", [])
        return out

    def query_range(self, promql: str, start_s: float, end_s: float, step_s: float) -> list[dict[str, Any]]:
        data = self._call("/api/v1/query_range", [("query", promql), ("start", f"{start_s:.3f}"),
                                                  ("end", f"{end_s:.3f}"), ("step", f"{step_s:g}")])
        out: list[dict[str, Any]] = data.get("result", [])
        return out

    def label_values(self, label: str, match: str, start_s: float, end_s: float) -> list[str]:
        data = self._call(f"/api/v1/label/{urllib.parse.quote(label)}/values",
                          [("match[]", match), ("start", f"{start_s:.3f}"), ("end", f"{end_s:.3f}")], post=False)
        return [str(v) for v in data]
