package io.github.kafkabalancer.assignor;

import org.apache.kafka.common.Uuid;

/** Per-partition consume load as the assignor sees it at assignment time (never blocks). */
interface LoadView {
    /** The load of a partition, or NaN when unknown or older than the configured age. */
    double load(Uuid topicId, int partition, long nowMs);

    LoadView NONE = (t, p, now) -> Double.NaN;
}
