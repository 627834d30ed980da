package io.github.kafkabalancer.assignor;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
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

/**
 * Converts the coordinator's view of a group (GroupSpec + topic describer + loads) into a {@link Problem}:
 * primitive arrays filled per topic (one topic-id lookup per topic, one per owned topic of a member),
 * no per-partition objects.
 */
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
        long t0 = System.nanoTime();
        String[] idArray = spec.memberIds().toArray(new String[0]);
        Arrays.sort(idArray);
        List<String> ids = Arrays.asList(idArray);
        int nm = idArray.length;
        boolean homogeneous = spec.subscriptionType() == SubscriptionType.HOMOGENEOUS;
        Map<String, Integer> rackIds = new HashMap<>();
        int[] memberRack = new int[nm];
        double[] cap = new double[nm];
        @SuppressWarnings("unchecked")
        Set<Uuid>[] subs = new Set[nm];
        Set<Uuid> allTopics = new HashSet<>();
        boolean anyRack = false;
        for (int m = 0; m < nm; m++) {
            MemberSubscription s = spec.memberSubscription(idArray[m]);
            Set<Uuid> st = s.subscribedTopicIds();
            subs[m] = st;
            if (!homogeneous || m == 0) {
                allTopics.addAll(st);
            }
            Optional<String> rack = s.rackId();
            if (rack.isPresent()) {
                memberRack[m] = rackIds.computeIfAbsent(rack.get(), x -> rackIds.size());
                anyRack = true;
            } else {
                memberRack[m] = -1;
            }
            cap[m] = capacity.applyAsDouble(idArray[m]);
        }
        long t1 = System.nanoTime();
        List<Uuid> topicList = new ArrayList<>(allTopics.size());
        for (Uuid t : allTopics) {
            if (topics.numPartitions(t) > 0) {
                topicList.add(t);
            }
        }
        topicList.sort(null); // Uuid order: deterministic (the harness gives ids in the reference's topic order)
        int nt = topicList.size();
        Map<Uuid, Integer> topicPos = new HashMap<>(KafkaBalancerAssignor.mapCapacity(nt));
        int[] firstPartition = new int[nt + 1];
        for (int t = 0; t < nt; t++) {
            topicPos.put(topicList.get(t), t);
            firstPartition[t + 1] = firstPartition[t] + topics.numPartitions(topicList.get(t));
        }
        // who subscribes to each topic: one pass over the subscriptions (or none when homogeneous)
        BitSet[] who = new BitSet[nt];
        if (homogeneous) {
            BitSet everyone = new BitSet(nm);
            everyone.set(0, nm);
            Arrays.fill(who, everyone);
        } else {
            for (int t = 0; t < nt; t++) {
                who[t] = new BitSet(nm);
            }
            for (int m = 0; m < nm; m++) {
                for (Uuid id : subs[m]) {
                    Integer t = topicPos.get(id);
                    if (t != null) {
                        who[t].set(m);
                    }
                }
            }
        }
        Map<BitSet, Integer> classKey = new HashMap<>();
        List<int[]> classMembers = new ArrayList<>();
        int[] classOfTopic = new int[nt];
        for (int t = 0; t < nt; t++) {
            Integer k = classKey.get(who[t]);
            if (k == null) {
                k = classMembers.size();
                classKey.put(who[t], k);
                classMembers.add(who[t].stream().toArray());
            }
            classOfTopic[t] = k;
        }
        int np = firstPartition[nt];
        int[] topicOf = new int[np];
        int[] number = new int[np];
        int[] classOf = new int[np];
        double[] load = new double[np];
        int[] prev = new int[np];
        Arrays.fill(prev, -1);
        int[][] partRacks = new int[np][];
        for (int t = 0; t < nt; t++) {
            int lo = firstPartition[t];
            int hi = firstPartition[t + 1];
            Arrays.fill(topicOf, lo, hi, t);
            Arrays.fill(classOf, lo, hi, classOfTopic[t]);
            for (int p = lo; p < hi; p++) {
                number[p] = p - lo;
            }
            loads.topic(topicList.get(t), hi - lo, nowMs, load, lo);
            if (anyRack) {
                for (int p = lo; p < hi; p++) {
                    partRacks[p] = racks(topics.racksForPartition(topicList.get(t), p - lo), rackIds);
                }
            } else {
                Arrays.fill(partRacks, lo, hi, NO_RACKS);
            }
        }
        long t2 = System.nanoTime();
        int known = 0;
        double knownSum = 0;
        for (int p = 0; p < np; p++) {
            double l = load[p];
            if (Double.isFinite(l) && l >= 0) {
                known++;
                knownSum += l;
            } else {
                load[p] = Double.NaN;
            }
        }
        String mode;
        if (known == 0) {
            mode = "counts";
            Arrays.fill(load, 1.0);
        } else {
            mode = known == np ? "loads" : "partial-loads";
            if (known < np) {
                double mean = knownSum / known;
                for (int p = 0; p < np; p++) {
                    if (Double.isNaN(load[p])) {
                        load[p] = mean;
                    }
                }
            }
        }
        readOwners(spec, idArray, homogeneous ? null : subs, topicPos, firstPartition, prev);
        long t3 = System.nanoTime();
        if (KafkaBalancerAssignor.TIMING) {
            System.err.printf("    members %.1f, topics %.1f, owned %.1f ms%n", (t1 - t0) / 1e6, (t2 - t1) / 1e6, (t3 - t2) / 1e6);
        }
        int[] rank = new int[nm];
        for (int m = 0; m < nm; m++) {
            rank[m] = m; // ids are sorted
        }
        Problem pr = new Problem(cap, load, prev, classOf, classMembers.toArray(new int[0][]), memberRack,
                partRacks, topicOf, number, rank);
        return new GroupProblem(ids, topicList, pr, known, mode);
    }

    /** prev[p] = the member (position) that owns partition p now; two claims: the first member by id keeps it. */
    private static void readOwners(GroupSpec spec, String[] ids, Set<Uuid>[] subs, Map<Uuid, Integer> topicPos,
                                   int[] firstPartition, int[] prev) {
        for (int m = 0; m < ids.length; m++) {
            MemberAssignment a = spec.memberAssignment(ids[m]);
            if (a == null) {
                continue;
            }
            for (Map.Entry<Uuid, Set<Integer>> e : a.partitions().entrySet()) {
                Integer t = topicPos.get(e.getKey());
                if (t == null || (subs != null && !subs[m].contains(e.getKey()))) {
                    continue;
                }
                claim(e.getValue(), m, firstPartition[t], firstPartition[t + 1] - firstPartition[t], prev);
            }
        }
    }

    private static void claim(Set<Integer> partitions, int m, int lo, int size, int[] prev) {
        for (Integer boxed : partitions) {
            int n = boxed;
            if (n >= 0 && n < size && prev[lo + n] < 0) {
                prev[lo + n] = m;
            }
        }
    }

    private static int[] racks(Set<String> racks, Map<String, Integer> rackIds) {
        int[] rs = new int[racks.size()];
        int i = 0;
        for (String r : racks) {
            Integer rid = rackIds.get(r);
            if (rid != null) {
                rs[i++] = rid;
            }
        }
        return i == rs.length ? rs : Arrays.copyOf(rs, i);
    }
}
