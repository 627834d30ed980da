package io.github.kafkabalancer.assignor;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;

/**
 * The assignment used when anything goes wrong: every partition of every subscribed topic, dealt round
 * robin over that topic's subscribers (sorted by id), continuing across topics where the last one
 * stopped, so counts stay within one of each other for identical subscriptions. Deliberately
 * independent of the balanced code path.
 */
final class CountFallback {
    private CountFallback() {
    }

    static GroupAssignment assign(GroupSpec spec, SubscribedTopicDescriber topics) {
        List<String> ids = new ArrayList<>(spec.memberIds());
        Collections.sort(ids);
        Map<String, Map<Uuid, Set<Integer>>> out = new HashMap<>();
        Map<Uuid, List<String>> subscribers = new HashMap<>();
        for (String id : ids) {
            out.put(id, new HashMap<>());
            for (Uuid t : spec.memberSubscription(id).subscribedTopicIds()) {
                subscribers.computeIfAbsent(t, x -> new ArrayList<>()).add(id);
            }
        }
        List<Uuid> topicList = new ArrayList<>(subscribers.keySet());
        topicList.sort((x, y) -> x.toString().compareTo(y.toString()));
        int next = 0;
        for (Uuid t : topicList) {
            List<String> who = subscribers.get(t);
            int n = Math.max(0, topics.numPartitions(t));
            for (int p = 0; p < n; p++) {
                String m = who.get((next + p) % who.size());
                out.get(m).computeIfAbsent(t, x -> new HashSet<>()).add(p);
            }
            next += n;
        }
        Map<String, MemberAssignment> members = new HashMap<>();
        for (Map.Entry<String, Map<Uuid, Set<Integer>>> e : out.entrySet()) {
            members.put(e.getKey(), new Assigned(e.getValue()));
        }
        return new GroupAssignment(members);
    }

    /** Every member with nothing: the last resort when even the count fallback fails. */
    static GroupAssignment empty(GroupSpec spec) {
        Map<String, MemberAssignment> members = new HashMap<>();
        try {
            for (String id : spec.memberIds()) {
                members.put(id, new Assigned(Map.of()));
            }
        } catch (RuntimeException e) {
            // nothing more we can do; an empty assignment is still valid
        }
        return new GroupAssignment(members);
    }
}
