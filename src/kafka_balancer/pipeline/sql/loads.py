"""Per-partition loads per window (the third stage), from the rates of ``rates.py``.

Kafka has no per-partition byte rates, so (``docs/samples-format.md``):

* ``nw_in``: the topic's bytes-in rate on the leader, split over the partitions of that topic the
  broker leads in proportion to their appended messages per second; without a JMX series, the leader replica's size
  delta plus the bytes retention deleted (deleted messages × bytes per message) over the span;
* ``nw_out`` (leader role): consumer bytes (the topic's bytes-out rate on the leader, split by the summed
  committed-offset deltas of all groups, or by appended messages when no group committed) plus the
  followers' replication fetches, ``nw_in × (RF − 1)``;
* ``disk``: the leader replica's last size in the window (the largest replica when the leader's is
  missing).

Example: a broker leads p0 and p1 of topic t with 300 and 100 new messages, and t's bytes-in rate on it
is 4000 B/s, so p0 gets 3000 B/s and p1 1000 B/s.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

PW_KEYS = ["cluster", "topic", "partition", "window"]


def split_topic_rates(df: DataFrame, tb_rates: DataFrame) -> DataFrame:
    """Adds ``nw_in_jmx`` and ``consumer_jmx`` (with _max/_p95) from the topic-broker rates. ``df``: the
    partition deltas with the group deltas joined (``committed_rate``)."""
    lead = Window.partitionBy("cluster", "topic", "leader", "window")
    df = df.select(
        "*",
        F.sum("leo_rate").over(lead).alias("_leo_tot"),
        F.sum("committed_rate").over(lead).alias("_cons_tot"),
        F.count("leo_rate").over(lead).alias("_led"),
    )
    in_share = F.when(F.col("_leo_tot") > 0, F.col("leo_rate") / F.col("_leo_tot")).otherwise(
        F.when(F.col("leo_rate").isNotNull(), F.lit(1.0) / F.col("_led"))
    )
    out_share = F.when(F.col("_cons_tot") > 0,
                       F.coalesce(F.col("committed_rate"), F.lit(0.0)) / F.col("_cons_tot"))
    df = df.select("*", in_share.alias("in_share"), F.coalesce(out_share, in_share).alias("out_share"))
    # the window above partitions by the same keys as this join: the partition rows are not shuffled again
    tb = tb_rates.withColumnRenamed("broker", "leader")
    df = df.join(tb, ["cluster", "topic", "leader", "window"], "left")
    split = [
        (F.col(share) * F.col(f"{rate}{stat}")).alias(f"{name}{stat}")
        for stat in ("", "_max", "_p95")
        for name, share, rate in (("nw_in_jmx", "in_share", "in_rate"), ("consumer_jmx", "out_share", "out_rate"))
    ]
    return df.select("*", *split).drop("_leo_tot", "_cons_tot", "_led")


def replica_sizes(rdel: DataFrame) -> DataFrame:
    """Per partition and window: ``max_size`` (the largest replica's last size) and ``sizes``, every
    replica's (broker, last_size, d_size, span_ms), from which :func:`partition_loads` picks the leader's.
    One aggregation: the replica rows are shuffled once, by the partition window keys."""
    return rdel.groupBy(*PW_KEYS).agg(
        F.max("last_size").alias("max_size"),
        F.collect_list(F.struct("broker", "last_size", "d_size", "span_ms")).alias("sizes"),
    )


def _leader_entry() -> Column:
    """The leader's entry of ``sizes`` (null when the leader replica has no size)."""
    return F.get(F.filter("sizes", lambda r: r["broker"] == F.col("leader")), 0)


def partition_loads(pdel: DataFrame, tb_rates: DataFrame, rdel: DataFrame, gdel: DataFrame) -> DataFrame:
    """The partition window table: nw_in, nw_out, disk (+ max/p95 of the network rates) per window."""
    # both joins on the partition window keys first (one shuffle of the partition rows), then the
    # per-topic-and-leader split
    df = pdel.join(gdel.select(*PW_KEYS, "d_committed", "committed_rate"), PW_KEYS, "left")
    df = df.join(replica_sizes(rdel), PW_KEYS, "left").select("*", _leader_entry().alias("_lr")).select(
        "*",
        F.col("_lr.last_size").alias("leader_size"),
        F.col("_lr.d_size").alias("leader_d_size"),
        F.col("_lr.span_ms").alias("size_span_ms"),
    ).drop("sizes", "_lr")
    df = split_topic_rates(df, tb_rates)
    msgs = F.col("last_leo") - F.col("last_lso")
    bpm = F.when(msgs > 0, F.coalesce(F.col("leader_size"), F.col("max_size")) / msgs)
    span = F.when(F.col("size_span_ms") > 0, F.col("size_span_ms"))
    # clipped at 0 (retention deleted more than was appended); null when the sizes give no rate (no leader
    # replica, no message count) and when the log end offset went back (a recreated or truncated log: the
    # size delta says nothing about what came in): the window then has no rate (greatest alone would turn
    # null into 0)
    raw_in = (F.col("leader_d_size") + F.col("d_lso") * bpm) / span * 1000.0
    size_in = F.when(raw_in.isNotNull() & F.col("d_leo").isNotNull(), F.greatest(raw_in, F.lit(0.0)))
    cons_span = F.when(F.col("span_ms") > 0, F.col("span_ms"))
    size_cons = F.col("d_committed") * bpm / cons_span * 1000.0
    repl = F.greatest(F.size("replicas") - 1, F.lit(0))
    nw_in = F.coalesce(F.col("nw_in_jmx"), size_in)
    consumer_out = F.coalesce(F.col("consumer_jmx"), size_cons, F.lit(0.0))
    df = df.select(
        "*",
        F.when(F.col("nw_in_jmx").isNotNull(), "jmx").when(size_in.isNotNull(), "size").alias("nw_in_source"),
        nw_in.alias("nw_in"),
        consumer_out.alias("consumer_out"),
        (consumer_out + nw_in * repl).alias("nw_out"),
        F.coalesce(F.col("leader_size"), F.col("max_size")).cast("double").alias("disk"),
    )
    peaks = []
    for stat in ("_max", "_p95"):
        peak_in = F.coalesce(F.col(f"nw_in_jmx{stat}"), F.col("nw_in"))
        peaks += [
            peak_in.alias(f"nw_in{stat}"),
            (F.coalesce(F.col(f"consumer_jmx{stat}"), F.col("consumer_out")) + peak_in * repl).alias(f"nw_out{stat}"),
        ]
    df = df.select("*", *peaks)
    return df.select(
        *PW_KEYS, "n", "last_ts", "replicas", "leader", "isr", "leader_moved",
        "nw_in", "nw_in_max", "nw_in_p95", "nw_out", "nw_out_max", "nw_out_p95", "consumer_out",
        "disk", "nw_in_source", "d_leo", "d_lso", "span_ms",
    )
