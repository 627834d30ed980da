package io.github.kafkabalancer.assignor;

import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;

/** One member's target assignment. */
final class Assigned implements MemberAssignment {
    private final Map<Uuid, Set<Integer>> partitions;

    Assigned(Map<Uuid, Set<Integer>> partitions) {
        Map<Uuid, Set<Integer>> copy = new HashMap<>();
        partitions.forEach((t, ps) -> copy.put(t, Collections.unmodifiableSet(ps)));
        this.partitions = Collections.unmodifiableMap(copy);
    }

    /** Takes a map that is already immutable, with immutable sets (no copy). */
    private Assigned(Map<Uuid, Set<Integer>> immutable, boolean owned) {
        this.partitions = immutable;
    }

    static Assigned of(Map<Uuid, Set<Integer>> immutableSets) {
        return new Assigned(immutableSets, true);
    }

    @Override
    public Map<Uuid, Set<Integer>> partitions() {
        return partitions;
    }

    @Override
    public String toString() {
        return "Assigned" + partitions;
    }
}
