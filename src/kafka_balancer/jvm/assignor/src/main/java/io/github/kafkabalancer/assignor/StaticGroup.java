package io.github.kafkabalancer.assignor;

import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberSubscription;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;

/**
 * A group given as plain data, seen through the coordinator's interfaces (for the JSON harness and
 * the benchmark; the broker supplies its own implementations).
 */
final class StaticGroup implements GroupSpec, SubscribedTopicDescriber {
    record Sub(Optional<String> rackId, Optional<String> instanceId, Set<Uuid> subscribedTopicIds)
            implements MemberSubscription {
    }

    final Map<String, Sub> subs;
    final Map<String, MemberAssignment> owned;
    final Map<Uuid, Integer> partitionCounts;
    final Map<Uuid, Map<Integer, Set<String>>> racks;
    private final SubscriptionType type;
    private final Map<Uuid, Set<Integer>> assignedAnywhere = new HashMap<>();

    StaticGroup(Map<String, Sub> subs, Map<String, MemberAssignment> owned, Map<Uuid, Integer> partitionCounts,
                Map<Uuid, Map<Integer, Set<String>>> racks) {
        this.subs = subs;
        Map<String, MemberAssignment> frozen = new HashMap<>();
        owned.forEach((m, a) -> frozen.put(m, new Assigned(a.partitions()))); // immutable, as the coordinator's
        this.owned = frozen;
        this.partitionCounts = partitionCounts;
        this.racks = racks;
        Set<Uuid> first = null;
        boolean same = true;
        for (Sub s : subs.values()) {
            if (first == null) {
                first = s.subscribedTopicIds();
            } else if (!first.equals(s.subscribedTopicIds())) {
                same = false;
            }
        }
        this.type = same ? SubscriptionType.HOMOGENEOUS : SubscriptionType.HETEROGENEOUS;
        for (MemberAssignment a : owned.values()) {
            a.partitions().forEach((t, ps) -> assignedAnywhere.computeIfAbsent(t, x -> new java.util.HashSet<>()).addAll(ps));
        }
    }

    /** A stable topic id from a topic name (the harness has names only). */
    static Uuid idOf(String topic) {
        UUID u = UUID.nameUUIDFromBytes(("kafka-balancer:" + topic).getBytes(StandardCharsets.UTF_8));
        return new Uuid(u.getMostSignificantBits(), u.getLeastSignificantBits() | 2L);
    }

    @Override
    public Collection<String> memberIds() {
        return subs.keySet();
    }

    @Override
    public SubscriptionType subscriptionType() {
        return type;
    }

    @Override
    public boolean isPartitionAssigned(Uuid topicId, int partition) {
        Set<Integer> s = assignedAnywhere.get(topicId);
        return s != null && s.contains(partition);
    }

    @Override
    public boolean isPartitionAssignable(Uuid topicId, int partition) {
        return true;
    }

    @Override
    public MemberSubscription memberSubscription(String memberId) {
        return subs.get(memberId);
    }

    @Override
    public MemberAssignment memberAssignment(String memberId) {
        MemberAssignment a = owned.get(memberId);
        return a != null ? a : new Assigned(Map.of());
    }

    @Override
    public int numPartitions(Uuid topicId) {
        return partitionCounts.getOrDefault(topicId, -1);
    }

    @Override
    public Set<String> racksForPartition(Uuid topicId, int partition) {
        Map<Integer, Set<String>> t = racks.get(topicId);
        if (t == null) {
            return Set.of();
        }
        return t.getOrDefault(partition, Set.of());
    }
}
