package io.github.kafkabalancer.assignor;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.ToDoubleFunction;
import org.apache.kafka.common.Configurable;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.ConsumerGroupPartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.PartitionAssignorException;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The load-aware server-side consumer group assignor {@value #NAME} (KIP-848).
 *
 * <p>Broker: put the jar on the classpath and list the class in {@code group.consumer.assignors}
 * (e.g. {@code uniform,range,io.github.kafkabalancer.assignor.KafkaBalancerAssignor}). Client:
 * {@code group.protocol=consumer} and {@code group.remote.assignor=kafka-balancer}.
 *
 * <p>Assignment runs the balanced algorithm ({@link Balanced}) on per-partition loads that a
 * background thread reads from the compacted topic {@code __kafka_balancer_partition_loads}
 * ({@link LoadCache}); with no fresh loads it balances counts. It never throws: any error gives a
 * count-balanced assignment ({@link CountFallback}) and one log line.
 *
 * <p>Settings (broker properties, all optional): {@code kafka.balancer.assignor.max.moves} (-1 =
 * unlimited), {@code kafka.balancer.assignor.tolerance} (0.01), {@code kafka.balancer.loads.enable}
 * (true), {@code kafka.balancer.loads.topic}, {@code kafka.balancer.loads.max.age.ms} (3600000),
 * {@code kafka.balancer.loads.bootstrap.servers} (default: this broker's own inter-broker listener
 * when it is PLAINTEXT), {@code kafka.balancer.loads.client.*} (passed to the load reader's consumer
 * and admin client, e.g. security settings).
 */
public final class KafkaBalancerAssignor implements ConsumerGroupPartitionAssignor, Configurable, AutoCloseable {
    public static final String NAME = "kafka-balancer";
    static final String PREFIX = "kafka.balancer.";
    static final boolean TIMING = Boolean.getBoolean("kafka.balancer.timing");
    private static final Logger LOG = LoggerFactory.getLogger(KafkaBalancerAssignor.class);

    private volatile Balanced.Options options = Balanced.Options.defaults();
    private volatile LoadView loads = LoadView.NONE;
    private LoadCache cache;
    private volatile String lastMode = "";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public void configure(Map<String, ?> configs) {
        try {
            int maxMoves = (int) number(configs, PREFIX + "assignor.max.moves", -1);
            double tol = number(configs, PREFIX + "assignor.tolerance", Balanced.DEFAULT_TOLERANCE);
            options = new Balanced.Options(maxMoves, tol, -1);
            LoadCache.Settings s = LoadCache.Settings.from(configs);
            if (s != null) {
                cache = LoadCache.shared(s);
                loads = cache;
            }
            LOG.info("kafka-balancer assignor configured: max.moves={} tolerance={} loads={}", maxMoves, tol,
                    s == null ? "off" : s.describe());
        } catch (RuntimeException e) {
            // a bad setting must not stop the broker: keep defaults and count-balance without loads
            LOG.error("kafka-balancer assignor: ignoring its settings ({}); it will balance counts", e.toString());
        }
    }

    static double number(Map<String, ?> configs, String key, double dflt) {
        Object v = configs.get(key);
        if (v == null) {
            return dflt;
        }
        try {
            return Double.parseDouble(v.toString().trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + "=" + v + " is not a number", e);
        }
    }

    @Override
    public GroupAssignment assign(GroupSpec groupSpec, SubscribedTopicDescriber subscribedTopicDescriber)
            throws PartitionAssignorException {
        return assignWith(groupSpec, subscribedTopicDescriber, loads, m -> 1.0, options);
    }

    /** The assignment with explicit loads, capacities and options (used by the harness; never throws). */
    GroupAssignment assignWith(GroupSpec spec, SubscribedTopicDescriber topics, LoadView view,
                               ToDoubleFunction<String> capacity, Balanced.Options opt) {
        try {
            long t0 = System.nanoTime();
            GroupProblem gp = GroupProblem.build(spec, topics, view, capacity, System.currentTimeMillis());
            long t1 = System.nanoTime();
            int[] owner = Balanced.assign(gp.problem, opt);
            long t2 = System.nanoTime();
            if (TIMING) {
                System.err.printf("build %.1f ms, balance %.1f ms%n", (t1 - t0) / 1e6, (t2 - t1) / 1e6);
            }
            if (!gp.mode.equals(lastMode)) {
                LOG.info("kafka-balancer: assigning by {} ({} of {} partitions have a fresh load)", gp.mode,
                        gp.loadsKnown, gp.problem.partitions);
                lastMode = gp.mode;
            }
            return toAssignment(gp, owner);
        } catch (Throwable t) {
            if (t instanceof VirtualMachineError && !(t instanceof StackOverflowError)) {
                throw (VirtualMachineError) t;
            }
            LOG.error("kafka-balancer: assignment failed ({}); using a count-balanced assignment instead", t.toString());
            try {
                return CountFallback.assign(spec, topics);
            } catch (Throwable t2) {
                LOG.error("kafka-balancer: count fallback failed too ({}); assigning nothing this round", t2.toString());
                return CountFallback.empty(spec);
            }
        }
    }

    /**
     * The result as the coordinator wants it, built from arrays: partitions grouped by member with one
     * counting pass, then per member one map with one compact {@link PartitionSet} per topic (partition
     * positions are topic-contiguous and in partition order, so each run is already sorted).
     */
    static GroupAssignment toAssignment(GroupProblem gp, int[] owner) {
        Problem pr = gp.problem;
        int nm = pr.members;
        int np = pr.partitions;
        int[] start = new int[nm + 1];
        for (int p = 0; p < np; p++) {
            int m = owner[p];
            if (m < 0 || m >= nm || !pr.classHas[pr.classOf[p]].get(m)) {
                throw new IllegalStateException("partition position " + p + " has invalid owner " + m);
            }
            start[m + 1]++;
        }
        for (int m = 0; m < nm; m++) {
            start[m + 1] += start[m];
        }
        int[] fill = Arrays.copyOf(start, nm);
        int[] order = new int[np];
        for (int p = 0; p < np; p++) {
            order[fill[owner[p]]++] = p;
        }
        int[] numbers = new int[np];
        for (int i = 0; i < np; i++) {
            numbers[i] = pr.partitionNumber[order[i]];
        }
        // one entry per run of one topic within a member's partitions (positions are topic-contiguous)
        int runs = 0;
        for (int i = 0; i < np; i++) {
            if (i == 0 || owner[order[i]] != owner[order[i - 1]] || pr.topicOf[order[i]] != pr.topicOf[order[i - 1]]) {
                runs++;
            }
        }
        Uuid[] keys = new Uuid[runs];
        @SuppressWarnings("unchecked")
        Set<Integer>[] values = new Set[runs];
        int[] runStartOf = new int[nm + 1]; // member m's runs are [runStartOf[m], runStartOf[m + 1])
        int r = 0;
        for (int m = 0; m < nm; m++) {
            runStartOf[m] = r;
            int from = start[m];
            int to = start[m + 1];
            int runStart = from;
            for (int i = from + 1; i <= to; i++) {
                if (i == to || pr.topicOf[order[i]] != pr.topicOf[order[runStart]]) {
                    keys[r] = gp.topicIds.get(pr.topicOf[order[runStart]]);
                    values[r++] = new PartitionSet(numbers, runStart, i);
                    runStart = i;
                }
            }
        }
        runStartOf[nm] = r;
        Map<String, MemberAssignment> members = new HashMap<>(mapCapacity(nm));
        for (int m = 0; m < nm; m++) {
            members.put(gp.memberIds.get(m), Assigned.of(new TopicMap(keys, values, runStartOf[m], runStartOf[m + 1])));
        }
        return new GroupAssignment(members);
    }

    /** A HashMap capacity that holds n entries without rehashing. */
    static int mapCapacity(int n) {
        return (int) (n / 0.75f) + 1;
    }

    @Override
    public void close() {
        if (cache != null) {
            cache.release();
            cache = null;
        }
    }
}
