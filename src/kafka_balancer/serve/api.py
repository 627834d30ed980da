"""The HTTP API (FastAPI): JSON reads, authenticated writes, Prometheus metrics, the dashboard.

Reads: ``GET /api/state``, ``/api/load``, ``/api/proposal``, ``/api/anomalies``, ``/api/executions``,
``/api/broker-history``. Writes (bearer token or basic auth): ``POST /api/rebalance``, ``/api/add-brokers``,
``/api/remove-brokers``, ``/api/demote-brokers`` (dry-run unless ``"dry_run": false``),
``/api/broker-history/forget``, ``/api/stop``, ``/api/pause``, ``/api/resume``. Errors are JSON
``{"error", "field", "hint"}``: 401 without credentials, 4xx for a bad request (naming the field), 409 when a
guard refuses; never a traceback.
"""

from __future__ import annotations

import base64
import binascii
import secrets
import time
from collections.abc import Callable
from dataclasses import replace
from importlib import resources
from typing import Any, TypeVar

from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from kafka_balancer.errors import InputError
from kafka_balancer.planner.constraints import Constraints
from kafka_balancer.planner.policy import parse_goals
from kafka_balancer.serve import schemas as sc
from kafka_balancer.serve.metrics import metrics_text
from kafka_balancer.serve.service import Conflict, Service
from kafka_balancer.serve.wording import api_words, field_of
from kafka_balancer.validate.values import parse_polish, parse_regex, parse_size

T = TypeVar("T")
# the names a 400 may lead with: the request bodies' fields and the proposal's query parameters
_FIELDS = frozenset({*sc.RebalanceRequest.model_fields, *sc.BrokersRequest.model_fields, "polish"})


class Unauthorized(Exception):
    pass


def _parsed(name: str, parse: Callable[[str, str], T], text: str) -> T:
    """``parse(text, name)``, its InputError led by the field's name (every 400 of this API names it first)."""
    try:
        return parse(text, name)
    except InputError as exc:
        raise InputError(f"{name}: {exc.message}", hint=exc.hint) from None


def _limits(body: sc.Limits, service: Service) -> Constraints | None:
    """The request's excluded topics and budgets over the service's (None: the service's alone, which also
    hold the broker history's demotions), each value checked here so that a 400 names its field."""
    if body.excluded_topics is None and body.max_moves is None and body.max_bytes is None:
        return None
    exclude = service.limits().exclude_topics
    if body.excluded_topics is not None:
        _parsed("excluded_topics", parse_regex, body.excluded_topics)
        exclude = body.excluded_topics
    nbytes = float(_parsed("max_bytes", parse_size, body.max_bytes)) if body.max_bytes is not None else None
    return replace(service.limits(), exclude_topics=exclude, max_moves=body.max_moves, max_bytes=nbytes)


def _policy(body: sc.Policy) -> tuple[str, ...] | None:
    """The request's goal policy (None: the service's); parse_goals's errors lead with "--goals", which the
    error handler turns into "goals"."""
    return parse_goals(body.goals) if body.goals is not None else None


def _field(loc: Any) -> str:
    parts = [str(x) for x in loc if x not in ("body", "query")]
    return ".".join(parts) or ".".join(str(x) for x in loc)


def create_app(service: Service, token: str | None, basic: tuple[str, str] | None = None) -> FastAPI:
    """The app over ``service``. ``token``/``basic``: credentials of the write endpoints (one is needed)."""
    app = FastAPI(title="kafka-balancer", version="1", description=__doc__,
                  docs_url="/docs", redoc_url=None)
    static = resources.files("kafka_balancer.serve") / "static"

    def require_writer(request: Request) -> None:
        header = request.headers.get("authorization", "")
        scheme, _, value = header.partition(" ")
        if scheme.lower() == "bearer" and token and secrets.compare_digest(value.strip().encode(), token.encode()):
            return
        if scheme.lower() == "basic" and basic:
            try:
                user, _, pw = base64.b64decode(value.strip(), validate=True).decode().partition(":")
            except (binascii.Error, UnicodeDecodeError):
                raise Unauthorized() from None
            if secrets.compare_digest(user.encode(), basic[0].encode()) and \
                    secrets.compare_digest(pw.encode(), basic[1].encode()):
                return
        raise Unauthorized()

    writer = [Depends(require_writer)]

    # ---- errors ---------------------------------------------------------------------------------
    @app.exception_handler(Unauthorized)
    def _unauth(_r: Request, _e: Unauthorized) -> JSONResponse:
        return JSONResponse({"error": "authentication required for write endpoints", "field": "Authorization",
                             "hint": "send 'Authorization: Bearer <token>' (or basic auth) as configured"},
                            status_code=401, headers={"WWW-Authenticate": 'Bearer realm="kafka-balancer"'})

    @app.exception_handler(RequestValidationError)
    def _invalid(_r: Request, exc: RequestValidationError) -> JSONResponse:
        errs = exc.errors()
        first = errs[0] if errs else {"loc": (), "msg": "invalid request"}
        field = _field(first.get("loc", ()))
        return JSONResponse({"error": f"{field or 'body'}: {first.get('msg')}", "field": field or "body",
                             "hint": None, "details": [{"field": _field(e.get("loc", ())), "error": e.get("msg")}
                                                       for e in errs[:10]]}, status_code=422)

    @app.exception_handler(InputError)
    def _input(_r: Request, exc: InputError) -> JSONResponse:
        message = api_words(exc.message)
        return JSONResponse({"error": message, "field": field_of(message, _FIELDS),
                             "hint": api_words(exc.hint) if exc.hint else None}, status_code=400)

    @app.exception_handler(Conflict)
    def _conflict(_r: Request, exc: Conflict) -> JSONResponse:
        return JSONResponse({"error": api_words(exc.message), "field": None,
                             "hint": api_words(exc.hint) if exc.hint else None}, status_code=409)

    @app.exception_handler(StarletteHTTPException)
    def _http(_r: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse({"error": str(exc.detail), "field": None, "hint": None}, status_code=exc.status_code)

    @app.exception_handler(Exception)
    def _any(_r: Request, exc: Exception) -> JSONResponse:
        return JSONResponse({"error": f"internal error: {type(exc).__name__}", "field": None,
                             "hint": "see the service log"}, status_code=500)

    # ---- reads ----------------------------------------------------------------------------------
    @app.get("/api/state", response_model=sc.StateResponse, tags=["read"])
    def get_state() -> dict[str, Any]:
        return service.state()

    @app.get("/api/load", response_model=sc.LoadResponse, tags=["read"],
             responses={409: {"model": sc.ErrorBody}})
    def get_load(history: int = Query(120, ge=0, le=720, description="σ points of past windows")) -> Response:
        # pre-serialised and cached per model (the schema above documents it)
        return Response(service.load_json(history), media_type="application/json")

    @app.get("/api/proposal", response_model=sc.ProposalBody, tags=["read"],
             responses={409: {"model": sc.ErrorBody}})
    def get_proposal(
        theta: float | None = Query(None, gt=0, le=1, description="capacity goal θ"),
        eps: float | None = Query(None, gt=0, le=10, description="distribution goal ε"),
        polish: str | None = Query(None, max_length=32, description="polishing allowance, as `plan --polish`: a "
                                   "share of the byte bound (1.5; 0: none) or a size (300G)"),
        moves: int = Query(200, ge=0, le=100_000, description="moves listed at most"),
    ) -> Response:
        allowance = _parsed("polish", parse_polish, polish) if polish is not None else None
        return Response(service.proposal_json(theta, eps, allowance, moves), media_type="application/json")

    @app.get("/api/anomalies", response_model=sc.AnomaliesResponse, tags=["read"])
    def get_anomalies(limit: int = Query(200, ge=1, le=500)) -> dict[str, Any]:
        return {"anomalies": service.anomalies(limit)}

    @app.get("/api/executions", response_model=sc.ExecutionsResponse, tags=["read"])
    def get_executions(limit: int = Query(100, ge=1, le=500)) -> dict[str, Any]:
        return {"executions": service.execution_list(limit)}

    @app.get("/api/broker-history", response_model=sc.HistoryResponse, tags=["read"])
    def get_history() -> dict[str, Any]:
        return {"brokers": service.history.listing(time.time()), "retention_s": service.history.retention_s}

    @app.get("/metrics", tags=["read"], response_class=Response)
    def get_metrics() -> Response:
        body, ctype = metrics_text(service)
        return Response(body, media_type=ctype)

    # ---- writes ---------------------------------------------------------------------------------
    err: dict[int | str, dict[str, Any]] = {code: {"model": sc.ErrorBody} for code in (401, 409, 422)}

    @app.post("/api/rebalance", response_model=sc.ActionResponse, dependencies=writer, tags=["write"],
              responses=err)
    def post_rebalance(body: sc.RebalanceRequest) -> dict[str, Any]:
        limits = _limits(body, service)
        if body.leadership_only:
            limits = replace(limits or service.limits(), leadership_only=True)
        return service.request("rebalance", [], body.dry_run, body.theta, body.eps, limits, _policy(body))

    @app.post("/api/add-brokers", response_model=sc.ActionResponse, dependencies=writer, tags=["write"],
              responses=err)
    def post_add(body: sc.BrokersRequest) -> dict[str, Any]:
        return service.request("add_brokers", body.brokers, body.dry_run, limits=_limits(body, service),
                               goals=_policy(body))

    @app.post("/api/remove-brokers", response_model=sc.ActionResponse, dependencies=writer, tags=["write"],
              responses=err)
    def post_remove(body: sc.BrokersRequest) -> dict[str, Any]:
        return service.request("remove_brokers", body.brokers, body.dry_run, limits=_limits(body, service),
                               goals=_policy(body))

    @app.post("/api/demote-brokers", response_model=sc.ActionResponse, dependencies=writer, tags=["write"],
              responses=err)
    def post_demote(body: sc.BrokersRequest) -> dict[str, Any]:
        if body.goals is not None:
            raise InputError("goals: a demotion only reorders replica lists, by no goal policy",
                             hint="leave goals out, or ask /api/rebalance with the goals you want")
        return service.request("demote", body.brokers, body.dry_run, limits=_limits(body, service))

    @app.post("/api/broker-history/forget", response_model=sc.ForgetResponse, dependencies=writer,
              tags=["write"], responses=err)
    def post_forget(body: sc.ForgetRequest) -> dict[str, Any]:
        """Brokers removed or demoted through the service may receive replicas and lead again."""
        forgotten = service.forget_brokers(body.brokers)
        return {"forgotten": forgotten, "brokers": service.history.listing(time.time()),
                "notes": service.after_forget(forgotten)}

    @app.post("/api/stop", response_model=sc.SwitchResponse, dependencies=writer, tags=["write"], responses=err)
    def post_stop() -> dict[str, Any]:
        stopped = service.stop_execution()
        return {"paused": service.paused, "stopped": stopped}

    @app.post("/api/pause", response_model=sc.SwitchResponse, dependencies=writer, tags=["write"], responses=err)
    def post_pause() -> dict[str, Any]:
        service.set_paused(True)
        return {"paused": True}

    @app.post("/api/resume", response_model=sc.SwitchResponse, dependencies=writer, tags=["write"], responses=err)
    def post_resume() -> dict[str, Any]:
        service.set_paused(False)
        return {"paused": False}

    # ---- dashboard ------------------------------------------------------------------------------
    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(str(static / "index.html"), media_type="text/html")

    app.mount("/static", StaticFiles(directory=str(static)), name="static")
    return app
