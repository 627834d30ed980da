package io.github.kafkabalancer.assignor;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.ConsumerGroupPartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;

/**
 * Plain timed harness: our assignor next to Kafka's {@code uniform} (UniformAssignor, from the broker's
 * group-coordinator jar) on the same group, fresh and after 1 % of the members left (sticky round).
 *
 * <pre>java -cp ... io.github.kafkabalancer.assignor.Bench MEMBERS PARTITIONS TOPICS ZIPF_S REPS SEEDS [WARMUP]</pre>
 *
 * For seeds 1..SEEDS, prints one JSON line per (seed, assignor, round) with min / median / p90
 * milliseconds over REPS runs (after WARMUP untimed runs of the same calls, default 2, so the JIT has
 * compiled them; the two assignors' runs alternate, and the median of the per-pair time ratios is
 * printed too) and the max member load / lower bound under the Zipf loads.
 */
public final class Bench {
    private static int warmup = 2;

    private Bench() {
    }

    public static void main(String[] args) throws Exception {
        int members = Integer.parseInt(args[0]);
        int partitions = Integer.parseInt(args[1]);
        int topics = Integer.parseInt(args[2]);
        double s = Double.parseDouble(args[3]);
        int reps = Integer.parseInt(args[4]);
        int seeds = Integer.parseInt(args[5]);
        warmup = args.length > 6 ? Integer.parseInt(args[6]) : 2;
        for (long seed = 1; seed <= seeds; seed++) {
            one(members, partitions, topics, s, reps, seed);
        }
    }

    private static void one(int members, int partitions, int topics, double s, int reps, long seed) throws Exception {
        Random rnd = new Random(seed);
        Uuid[] ids = new Uuid[topics];
        int[] counts = new int[topics];
        Map<Uuid, Integer> countMap = new HashMap<>();
        for (int t = 0; t < topics; t++) {
            ids[t] = StaticGroup.idOf("bench-" + t);
            counts[t] = partitions / topics + (t < partitions % topics ? 1 : 0);
            countMap.put(ids[t], counts[t]);
        }
        // Zipf loads over all partitions, ranks shuffled
        double[] base = new double[partitions];
        for (int i = 0; i < partitions; i++) {
            base[i] = 1.0 / Math.pow(i + 1, s);
        }
        for (int i = partitions - 1; i > 0; i--) {
            int j = rnd.nextInt(i + 1);
            double x = base[i];
            base[i] = base[j];
            base[j] = x;
        }
        Map<Uuid, double[]> loads = new HashMap<>();
        for (int t = 0, k = 0; t < topics; t++) {
            loads.put(ids[t], Arrays.copyOfRange(base, k, k + counts[t]));
            k += counts[t];
        }
        LoadView view = new LoadView() { // as the broker's LoadCache: one lookup per topic
            @Override
            public double load(Uuid t, int p, long now) {
                return loads.get(t)[p];
            }

            @Override
            public void topic(Uuid t, int n, long now, double[] out, int offset) {
                System.arraycopy(loads.get(t), 0, out, offset, n);
            }
        };
        Set<Uuid> all = new HashSet<>(Arrays.asList(ids));
        Map<String, StaticGroup.Sub> subs = new LinkedHashMap<>();
        for (int m = 0; m < members; m++) {
            subs.put(String.format("member-%06d", m), new StaticGroup.Sub(Optional.empty(), Optional.empty(), all));
        }
        StaticGroup fresh = new StaticGroup(subs, Map.of(), countMap, Map.of());
        KafkaBalancerAssignor ours = new KafkaBalancerAssignor();
        ConsumerGroupPartitionAssignor uniform = (ConsumerGroupPartitionAssignor) Class
                .forName("org.apache.kafka.coordinator.group.assignor.UniformAssignor").getDeclaredConstructor()
                .newInstance();
        Call oursFresh = () -> ours.assignWith(fresh, fresh, view, x -> 1.0, Balanced.Options.defaults());
        Call uniformFresh = () -> uniform.assign(fresh, fresh);
        Run[] runs = timePaired(oursFresh, uniformFresh, reps);
        Map<String, GroupAssignment> first = Map.of("kafka-balancer", runs[0].result, "uniform", runs[1].result);
        print(seed, "kafka-balancer", "fresh", members, partitions, topics, s, runs[0], quality(runs[0].result, loads, members));
        print(seed, "uniform", "fresh", members, partitions, topics, s, runs[1], quality(runs[1].result, loads, members));
        // sticky round: 1 % of the members leave, each assignor starts from its own previous result
        Map<String, StaticGroup> sticky = new HashMap<>();
        int leftSize = 0;
        for (String name : List.of("kafka-balancer", "uniform")) {
            Map<String, StaticGroup.Sub> left = new LinkedHashMap<>(subs);
            Map<String, MemberAssignment> owned = new HashMap<>(first.get(name).members());
            List<String> names = new ArrayList<>(subs.keySet());
            Random r2 = new Random(seed + 1);
            for (int i = 0; i < Math.max(1, members / 100); i++) {
                String gone = names.get(r2.nextInt(names.size()));
                left.remove(gone);
                owned.remove(gone);
            }
            sticky.put(name, new StaticGroup(left, owned, countMap, Map.of()));
            leftSize = left.size();
        }
        StaticGroup go = sticky.get("kafka-balancer");
        StaticGroup gu = sticky.get("uniform");
        runs = timePaired(() -> ours.assignWith(go, go, view, x -> 1.0, Balanced.Options.defaults()),
                () -> uniform.assign(gu, gu), reps);
        print(seed, "kafka-balancer", "1%-left", leftSize, partitions, topics, s, runs[0], quality(runs[0].result, loads, leftSize));
        print(seed, "uniform", "1%-left", leftSize, partitions, topics, s, runs[1], quality(runs[1].result, loads, leftSize));
    }

    /**
     * Both calls warmed up, then timed alternately (ours, uniform, ours, ...) so that both see the same
     * machine: on a shared machine the load drifts, and back-to-back blocks would compare different
     * moments. Also gives each pair's ratio (ours / uniform).
     */
    private static Run[] timePaired(Call a, Call b, int reps) throws Exception {
        GroupAssignment ra = null;
        GroupAssignment rb = null;
        for (int i = 0; i < warmup; i++) {
            ra = a.run();
            rb = b.run();
        }
        double[] ma = new double[reps];
        double[] mb = new double[reps];
        double[] ratio = new double[reps];
        for (int i = 0; i < reps; i++) {
            long t0 = System.nanoTime();
            ra = a.run();
            long t1 = System.nanoTime();
            rb = b.run();
            long t2 = System.nanoTime();
            ma[i] = (t1 - t0) / 1e6;
            mb[i] = (t2 - t1) / 1e6;
            ratio[i] = ma[i] / Math.max(mb[i], 1e-6);
        }
        Arrays.sort(ratio);
        double pairRatio = ratio[reps / 2];
        return new Run[] {summary(ra, ma, pairRatio), summary(rb, mb, 1.0 / pairRatio)};
    }

    private static Run summary(GroupAssignment res, double[] ms, double pairRatio) {
        int reps = ms.length;
        Arrays.sort(ms);
        return new Run(res, ms[0], ms[reps / 2], ms[Math.min(reps - 1, (int) Math.ceil(0.9 * reps) - 1)], pairRatio);
    }

    private record Run(GroupAssignment result, double minMs, double medianMs, double p90Ms, double pairRatio) {
    }

    private interface Call {
        GroupAssignment run() throws Exception;
    }

    /** {max/LB, assigned partitions, max-min partition count, (member, topic) entries}. */
    private static double[] quality(GroupAssignment ga, Map<Uuid, double[]> loads, int members) {
        double total = 0;
        double heaviest = 0;
        for (double[] l : loads.values()) {
            for (double x : l) {
                total += x;
                heaviest = Math.max(heaviest, x);
            }
        }
        double max = 0;
        int assigned = 0;
        int minCount = Integer.MAX_VALUE;
        int maxCount = 0;
        int entries = 0;
        for (MemberAssignment a : ga.members().values()) {
            entries += a.partitions().size();
            double sum = 0;
            int n = 0;
            for (Map.Entry<Uuid, Set<Integer>> e : a.partitions().entrySet()) {
                for (int p : e.getValue()) {
                    sum += loads.get(e.getKey())[p];
                    n++;
                }
            }
            assigned += n;
            max = Math.max(max, sum);
            minCount = Math.min(minCount, n);
            maxCount = Math.max(maxCount, n);
        }
        double lb = Math.max(total / members, heaviest);
        return new double[] {max / lb, assigned, maxCount - minCount, entries};
    }

    private static void print(long seed, String name, String round, int members, int partitions, int topics, double s, Run r,
                              double[] q) {
        System.out.printf(java.util.Locale.ROOT,
                "{\"seed\":%d,\"assignor\":\"%s\",\"round\":\"%s\",\"members\":%d,\"partitions\":%d,\"topics\":%d,\"zipf_s\":%.2f,"
                        + "\"min_ms\":%.2f,\"median_ms\":%.2f,\"p90_ms\":%.2f,\"median_pair_ratio\":%.3f,\"max_over_lb\":%.4f,\"assigned\":%d,\"count_spread\":%d,\"topic_entries\":%d}%n",
                seed, name, round, members, partitions, topics, s, r.minMs, r.medianMs, r.p90Ms, r.pairRatio, q[0], (int) q[1], (int) q[2], (int) q[3]);
    }
}
