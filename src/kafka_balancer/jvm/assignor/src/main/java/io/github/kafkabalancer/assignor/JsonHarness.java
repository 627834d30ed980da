package io.github.kafkabalancer.assignor;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;

/**
 * Runs the assignor on groups given as JSON lines on stdin (one problem per line) and writes one JSON
 * line per problem: {@code {"id": ..., "assignment": {member: [[topic, partition], ...]}, "micros": N}}.
 *
 * <p>A problem is the {@code kafka-balancer assign --input} document (members with id, topics,
 * capacity, owned; partitions with topic, partition, load), plus optional {@code id},
 * {@code max_moves}, {@code tolerance}, {@code max_steps}, {@code fail_loads} (the load source throws), member {@code rack} and partition {@code racks}. The group goes
 * through the same entry point the broker calls (GroupSpec / SubscribedTopicDescriber), with the
 * loads given here. One JVM serves a whole batch.
 *
 * <pre>java -cp kafka-balancer-assignor.jar:KAFKA_JARS io.github.kafkabalancer.assignor.JsonHarness &lt; groups.jsonl</pre>
 */
public final class JsonHarness {
    private JsonHarness() {
    }

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        System.setOut(System.err); // log lines (log4j's default console is stdout) must not mix with results
        ObjectMapper json = new ObjectMapper();
        KafkaBalancerAssignor assignor = new KafkaBalancerAssignor();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            out.println(json.writeValueAsString(run(json, assignor, json.readTree(line))));
        }
        out.flush();
    }

    static ObjectNode run(ObjectMapper json, KafkaBalancerAssignor assignor, JsonNode doc) {
        // topic ids in the order the topics first appear among the partitions (the reference's topic
        // order), so the plugin, which orders topics by id, numbers partitions as the reference does
        Map<String, Uuid> ids = new HashMap<>();
        for (JsonNode p : doc.path("partitions")) {
            ids.computeIfAbsent(p.path("topic").asText(), x -> new Uuid(ids.size() + 1L, 0x6b622d74L));
        }
        for (JsonNode m : doc.path("members")) {
            m.path("topics").forEach(t -> ids.computeIfAbsent(t.asText(), x -> new Uuid(ids.size() + 1L, 0x6b622d74L)));
        }
        Map<String, StaticGroup.Sub> subs = new LinkedHashMap<>();
        Map<String, MemberAssignment> owned = new HashMap<>();
        Map<String, Double> capacity = new HashMap<>();
        for (JsonNode m : doc.path("members")) {
            String id = m.path("id").asText();
            Set<Uuid> topics = new HashSet<>();
            m.path("topics").forEach(t -> topics.add(ids.get(t.asText())));
            Optional<String> rack = m.hasNonNull("rack") ? Optional.of(m.get("rack").asText()) : Optional.empty();
            subs.put(id, new StaticGroup.Sub(rack, Optional.empty(), topics));
            capacity.put(id, m.path("capacity").asDouble(1.0));
            Map<Uuid, Set<Integer>> mine = new HashMap<>();
            m.path("owned").forEach(o -> mine.computeIfAbsent(ids.getOrDefault(o.get(0).asText(), Uuid.ZERO_UUID), x -> new HashSet<>())
                    .add(o.get(1).asInt()));
            owned.put(id, new Assigned(mine));
        }
        Map<Uuid, Integer> counts = new HashMap<>();
        Map<Uuid, String> names = new HashMap<>();
        Map<Uuid, Map<Integer, Double>> loads = new HashMap<>();
        Map<Uuid, Map<Integer, Set<String>>> racks = new HashMap<>();
        for (JsonNode p : doc.path("partitions")) {
            Uuid t = ids.get(p.path("topic").asText());
            names.put(t, p.path("topic").asText());
            int n = p.path("partition").asInt();
            counts.merge(t, n + 1, Math::max);
            if (p.has("load")) {
                loads.computeIfAbsent(t, x -> new HashMap<>()).put(n, p.get("load").asDouble());
            }
            if (p.has("racks")) {
                Set<String> rs = new HashSet<>();
                p.get("racks").forEach(r -> rs.add(r.asText()));
                racks.computeIfAbsent(t, x -> new HashMap<>()).put(n, rs);
            }
        }
        StaticGroup group = new StaticGroup(subs, owned, counts, racks);
        boolean failLoads = doc.path("fail_loads").asBoolean(false); // tests: a load source that throws
        LoadView view = (t, n, now) -> {
            if (failLoads) {
                throw new IllegalStateException("load source failure (test)");
            }
            Map<Integer, Double> l = loads.get(t);
            Double v = l == null ? null : l.get(n);
            return v == null ? Double.NaN : v;
        };
        int maxMoves = doc.hasNonNull("max_moves") ? doc.get("max_moves").asInt() : -1;
        double tol = doc.path("tolerance").asDouble(Balanced.DEFAULT_TOLERANCE);
        int maxSteps = doc.hasNonNull("max_steps") ? doc.get("max_steps").asInt() : -1;
        long t0 = System.nanoTime();
        GroupAssignment ga = assignor.assignWith(group, group, view, id -> capacity.getOrDefault(id, 1.0),
                new Balanced.Options(maxMoves, tol, maxSteps));
        long micros = (System.nanoTime() - t0) / 1000;
        ObjectNode res = json.createObjectNode();
        res.set("id", doc.path("id"));
        ObjectNode assignment = res.putObject("assignment");
        for (String id : subs.keySet()) {
            ArrayNode list = assignment.putArray(id);
            MemberAssignment a = ga.members().get(id);
            if (a == null) {
                continue;
            }
            List<String> topicNames = new ArrayList<>();
            a.partitions().forEach((t, ps) -> {
                for (int n : ps) {
                    ArrayNode tp = list.addArray();
                    tp.add(names.getOrDefault(t, t.toString()));
                    tp.add(n);
                }
                topicNames.add(names.get(t));
            });
        }
        res.put("micros", micros);
        return res;
    }
}
