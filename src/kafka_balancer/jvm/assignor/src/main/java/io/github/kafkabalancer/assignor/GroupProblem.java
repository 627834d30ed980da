package io.github.kafkabalancer.assignor;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.ToDoubleFunction;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberSubscription;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;

/** Converts the coordinator's view of a group (GroupSpec + topic describer + loads) into a {@link Problem}. */
final class GroupProblem {
    private static final int[] NO_RACKS = new int[0];
    final List<String> memberIds;
    final List<Uuid> topicIds;
    final Problem problem;
    final int loadsKnown; // partitions that had a fresh load
    final String mode;    // "loads", "partial-loads" or "counts"

    private GroupProblem(List<String> memberIds, List<Uuid> topicIds, Problem problem, int loadsKnown, String mode) {
        this.memberIds = memberIds;
        this.topicIds = topicIds;
        this.problem = problem;
        this.loadsKnown = loadsKnown;
        this.mode = mode;
    }

    static GroupProblem build(GroupSpec spec, SubscribedTopicDescriber topics, LoadView loads,
                              ToDoubleFunction<String> capacity, long nowMs) {
        List<String> ids = new ArrayList<>(spec.memberIds());
        Collections.sort(ids);
        int nm = ids.size();
        Map<String, Integer> rackIds = new HashMap<>();
        int[] memberRack = new int[nm];
        double[] cap = new double[nm];
        List<Set<Uuid>> subs = new ArrayList<>(nm);
        Set<Uuid> allTopics = new HashSet<>();
        boolean anyRack = false;
        boolean homogeneous = spec.subscriptionType() == SubscriptionType.HOMOGENEOUS;
        for (int m = 0; m < nm; m++) {
            MemberSubscription s = spec.memberSubscription(ids.get(m));
            Set<Uuid> st = s.subscribedTopicIds();
            subs.add(st);
            if (!homogeneous || m == 0) {
                allTopics.addAll(st);
            }
            Optional<String> rack = s.rackId();
            memberRack[m] = rack.map(r -> rackIds.computeIfAbsent(r, x -> rackIds.size())).orElse(-1);
            anyRack |= rack.isPresent();
            cap[m] = capacity.applyAsDouble(ids.get(m));
        }
        List<Uuid> topicList = new ArrayList<>();
        for (Uuid t : allTopics) {
            if (topics.numPartitions(t) > 0) {
                topicList.add(t);
            }
        }
        topicList.sort(null); // Uuid order: deterministic (the harness gives ids in the reference's topic order)
        Map<Uuid, Integer> topicPos = new HashMap<>();
        for (int t = 0; t < topicList.size(); t++) {
            topicPos.put(topicList.get(t), t);
        }
        // who subscribes to each topic: one pass over the subscriptions (or none when homogeneous)
        BitSet[] who = new BitSet[topicList.size()];
        if (homogeneous) {
            BitSet everyone = new BitSet(nm);
            everyone.set(0, nm);
            Arrays.fill(who, everyone);
        } else {
            for (int t = 0; t < who.length; t++) {
                who[t] = new BitSet(nm);
            }
            for (int m = 0; m < nm; m++) {
                for (Uuid id : subs.get(m)) {
                    Integer t = topicPos.get(id);
                    if (t != null) {
                        who[t].set(m);
                    }
                }
            }
        }
        Map<BitSet, Integer> classKey = new HashMap<>();
        List<int[]> classMembers = new ArrayList<>();
        int[] classOfTopic = new int[topicList.size()];
        int[] firstPartition = new int[topicList.size() + 1];
        for (int t = 0; t < topicList.size(); t++) {
            Integer k = classKey.get(who[t]);
            if (k == null) {
                k = classMembers.size();
                classKey.put(who[t], k);
                classMembers.add(who[t].stream().toArray());
            }
            classOfTopic[t] = k;
            firstPartition[t + 1] = firstPartition[t] + topics.numPartitions(topicList.get(t));
        }
        int np = firstPartition[topicList.size()];
        int[] topicOf = new int[np];
        int[] number = new int[np];
        int[] classOf = new int[np];
        double[] load = new double[np];
        int[] prev = new int[np];
        int[][] partRacks = new int[np][];
        int known = 0;
        double knownSum = 0;
        for (int t = 0; t < topicList.size(); t++) {
            Uuid id = topicList.get(t);
            for (int p = firstPartition[t]; p < firstPartition[t + 1]; p++) {
                int n = p - firstPartition[t];
                topicOf[p] = t;
                number[p] = n;
                classOf[p] = classOfTopic[t];
                prev[p] = -1;
                double l = loads.load(id, n, nowMs);
                if (Double.isFinite(l) && l >= 0) {
                    load[p] = l;
                    known++;
                    knownSum += l;
                } else {
                    load[p] = Double.NaN;
                }
                if (anyRack) {
                    Set<String> racks = topics.racksForPartition(id, n);
                    int[] rs = new int[racks.size()];
                    int i = 0;
                    for (String r : racks) {
                        Integer rid = rackIds.get(r);
                        rs[i++] = rid == null ? -1 : rid;
                    }
                    partRacks[p] = Arrays.stream(rs).filter(x -> x >= 0).toArray();
                } else {
                    partRacks[p] = NO_RACKS;
                }
            }
        }
        String mode;
        if (known == 0) {
            mode = "counts";
            Arrays.fill(load, 1.0);
        } else {
            mode = known == np ? "loads" : "partial-loads";
            double mean = knownSum / known;
            for (int p = 0; p < np; p++) {
                if (Double.isNaN(load[p])) {
                    load[p] = mean;
                }
            }
        }
        for (int m = 0; m < nm; m++) {
            MemberAssignment a = spec.memberAssignment(ids.get(m));
            if (a == null) {
                continue;
            }
            for (Map.Entry<Uuid, Set<Integer>> e : a.partitions().entrySet()) {
                Integer t = topicPos.get(e.getKey());
                if (t == null || !(homogeneous || subs.get(m).contains(e.getKey()))) {
                    continue;
                }
                for (int n : e.getValue()) {
                    int size = firstPartition[t + 1] - firstPartition[t];
                    if (n < 0 || n >= size) {
                        continue;
                    }
                    int p = firstPartition[t] + n;
                    if (prev[p] < 0) {
                        prev[p] = m; // two claims: the first member (by id) keeps it
                    }
                }
            }
        }
        int[] rank = new int[nm];
        for (int m = 0; m < nm; m++) {
            rank[m] = m; // ids are sorted
        }
        Problem pr = new Problem(cap, load, prev, classOf, classMembers.toArray(new int[0][]), memberRack,
                partRacks, topicOf, number, rank);
        return new GroupProblem(ids, topicList, pr, known, mode);
    }
}
