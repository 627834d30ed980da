package io.github.kafkabalancer.assignor;

import org.apache.kafka.common.Uuid;

/** Per-partition consume load as the assignor sees it at assignment time (never blocks). */
interface LoadView {
    /** The load of a partition, or NaN when unknown or older than the configured age. */
    double load(Uuid topicId, int partition, long nowMs);

    /** Loads of partitions 0..n-1 of a topic into out[offset..offset+n) (NaN where unknown). */
    default void topic(Uuid topicId, int n, long nowMs, double[] out, int offset) {
        for (int i = 0; i < n; i++) {
            out[offset + i] = load(topicId, i, nowMs);
        }
    }

    LoadView NONE = (t, p, now) -> Double.NaN;
}
