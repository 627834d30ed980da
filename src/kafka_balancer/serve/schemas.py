"""Typed request and response bodies of the HTTP API (they make the OpenAPI schema at /openapi.json)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from kafka_balancer.planner.constraints import MAX_MOVES


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ---- requests --------------------------------------------------------------------------------
class Limits(Strict):
    """What a plan keeps to besides its goals, as the `plan` flags of the same names."""

    excluded_topics: str | None = Field(
        None, min_length=1, max_length=4096,
        description="regular expression on whole topic names: those partitions never move, not even their "
        "leadership, and their load still counts (default: the service's exclude_topics)")
    max_moves: int | None = Field(None, ge=0, le=MAX_MOVES, description="at most this many replica copies")
    max_bytes: str | None = Field(None, min_length=1, max_length=32,
                                  description="at most this many bytes copied, a size such as 500G")


class Policy(Limits):
    goals: str | None = Field(
        None, min_length=1, max_length=512,
        description="the goal policy, highest priority first, as `plan --goals`: for example "
        "capacity,distribution,replica_count,leader_count (default: the service's [goals] goals; a demotion, "
        "which only reorders replicas, takes none)")


class RebalanceRequest(Policy):
    dry_run: bool = Field(True, description="only propose (default); false executes the plan")
    theta: float | None = Field(None, gt=0, le=1, description="capacity goal θ (default: the service's)")
    eps: float | None = Field(None, gt=0, le=10, description="distribution goal ε (default: the service's)")
    leadership_only: bool = Field(False, description="move leadership only, no replica (as `plan --leadership-only`)")


class BrokersRequest(Policy):
    brokers: list[int] = Field(..., min_length=1, max_length=10_000, description="Kafka broker ids")
    dry_run: bool = Field(True, description="only propose (default); false executes the plan")


class ForgetRequest(Strict):
    brokers: list[int] = Field(..., min_length=1, max_length=10_000,
                               description="Kafka broker ids whose broker-history entries end now")


# ---- responses -------------------------------------------------------------------------------
class ErrorBody(BaseModel):
    error: str
    field: str | None = None
    hint: str | None = None


class ExecutionProgress(BaseModel):
    id: str | None = None
    running: bool = False
    partitions: int = 0
    partitions_moved: int = 0
    bytes_planned: int = 0
    bytes_moved: int = 0
    submitted: int = 0
    throttle_set: bool = False
    open: bool = False
    last_event: str | None = None


class ModelStatus(BaseModel):
    status: str
    loads_at: float | None
    pipeline_seconds: float | None
    source: str
    balanced: bool | None


class HistoryEntry(BaseModel):
    broker: int
    kind: str = Field(description="removed (kept empty by every plan) or demoted (kept from leading)")
    since: float
    expires: float
    execution: str | None


class HistoryResponse(BaseModel):
    brokers: list[HistoryEntry]
    retention_s: float


class ForgetResponse(BaseModel):
    forgotten: list[HistoryEntry]
    brokers: list[HistoryEntry]
    notes: list[str] = Field(default_factory=list, description="what happens next to a forgotten removed broker "
                             "that is live and empty")


class StateResponse(BaseModel):
    started_at: float
    now: float
    paused: bool
    dry_run: bool
    self_healing: list[str]
    rounds: int
    sample_errors: int
    last_error: str | None
    brokers_alive: list[int]
    brokers_known: list[int]
    partitions: int
    under_replicated: int
    offline: int
    model: ModelStatus
    execution: ExecutionProgress | None
    cooldown_left_s: float
    open_anomalies: int
    broker_history: list[HistoryEntry]
    config: dict[str, Any]


class BrokerResource(BaseModel):
    load: float
    capacity: float
    util: float
    gamma: float | None


class BrokerLoad(BaseModel):
    id: int
    alive: bool
    rack: str | None
    replicas: int
    leaders: int
    resources: dict[str, BrokerResource]


class ResourceSummary(BaseModel):
    sigma: float
    eta: float
    mean_util: float
    max_gamma: float
    theta: float
    band_low: float
    band_high: float
    over_theta: int
    balanced: bool


class LoadResponse(BaseModel):
    theta: float
    eps: float
    eta: float
    n_live: int
    balanced: bool
    fingerprint: str
    resources: dict[str, ResourceSummary]
    brokers: list[BrokerLoad]
    sigma_history: list[dict[str, Any]] = []


class Move(BaseModel):
    topic: str
    partition: int
    to: list[int]
    bytes: float
    from_: list[int] = Field(default_factory=list, alias="from")

    model_config = ConfigDict(populate_by_name=True)


class ProposalBody(BaseModel):
    mode: str
    brokers: list[int]
    partitions: int
    replica_moves: int
    leader_moves: int
    bytes: float
    balanced_before: bool
    balanced_after: bool
    before: dict[str, dict[str, float]]
    after: dict[str, dict[str, float]]
    notes: list[str]
    moves: list[Move]
    plan: dict[str, Any] | None = None
    constraints: dict[str, Any] | None = Field(
        None, description="what the plan kept to: the mode's brokers, excluded topics and budgets (null: none)")
    goals: list[dict[str, Any]] | None = Field(
        None, description="each goal of the policy, highest first, before and after the plan (null: a plan "
        "the planner did not make, such as a demotion or a leader election)")


class ActionResponse(BaseModel):
    dry_run: bool
    proposal: ProposalBody
    execution: str | None = None


class AnomalyBody(BaseModel):
    id: str
    type: str
    key: str
    first_seen: float
    state: str
    evidence: dict[str, Any]
    updated: float
    reason: str
    execution: str | None
    closed: bool = False
    history: list[dict[str, Any]]


class AnomaliesResponse(BaseModel):
    anomalies: list[AnomalyBody]


class ExecutionBody(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str
    state: str
    mode: str | None = None
    reason: str | None = None
    started: float | None = None
    ended: float | None = None
    partitions: int | None = None
    bytes_planned: float | None = None
    bytes_moved: float | None = None
    verified: bool | None = None
    progress: ExecutionProgress | None = None


class ExecutionsResponse(BaseModel):
    executions: list[ExecutionBody]


class SwitchResponse(BaseModel):
    paused: bool
    stopped: bool | None = None
