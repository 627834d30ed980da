/*
 * Cruise Control harness for kafka-balancer's bench/compare_planners.py.
 *
 * Loads a kafka-balancer snapshot (docs: shared/docs/snapshot-format.md) into Cruise Control's ClusterModel,
 * runs GoalOptimizer with Cruise Control's default goal list, and writes
 *   --plan  : kafka-reassign-partitions JSON of the changed partitions, replicas[0] = leader
 *   --stats : {"status", "wall_s", "cpu_s" (process CPU while optimizing), "thread_cpu_s", "jvm_startup_cpu_s",
 *              "load_cpu_s", "peak_heap_bytes", "proposals", "violated_goals_after", "goal_seconds", ...}
 *
 * Built against Cruise Control 2.5.146 (ClusterModel, GoalOptimizer, OptimizationOptions, KafkaMetricDef); see
 * pom.xml for where those jars come from. When a hard goal cannot be met the optimizer throws; the harness then
 * writes no plan and reports {"status": "failed", "failure": "<Cruise Control's message>"}.
 */
package kafkabalancer.bench.cc;

import com.codahale.metrics.MetricRegistry;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.linkedin.cruisecontrol.monitor.sampling.aggregator.AggregatedMetricValues;
import com.linkedin.cruisecontrol.monitor.sampling.aggregator.MetricValues;
import com.linkedin.kafka.cruisecontrol.analyzer.GoalOptimizer;
import com.linkedin.kafka.cruisecontrol.analyzer.OptimizationOptions;
import com.linkedin.kafka.cruisecontrol.analyzer.OptimizerResult;
import com.linkedin.kafka.cruisecontrol.analyzer.goals.Goal;
import com.linkedin.kafka.cruisecontrol.async.progress.OperationProgress;
import com.linkedin.kafka.cruisecontrol.common.Resource;
import com.linkedin.kafka.cruisecontrol.config.BrokerCapacityInfo;
import com.linkedin.kafka.cruisecontrol.config.KafkaCruiseControlConfig;
import com.linkedin.kafka.cruisecontrol.config.constants.AnalyzerConfig;
import com.linkedin.kafka.cruisecontrol.exception.KafkaCruiseControlException;
import com.linkedin.kafka.cruisecontrol.executor.ExecutionProposal;
import com.linkedin.kafka.cruisecontrol.model.Broker;
import com.linkedin.kafka.cruisecontrol.model.ClusterModel;
import com.linkedin.kafka.cruisecontrol.model.ReplicaPlacementInfo;
import com.linkedin.kafka.cruisecontrol.monitor.ModelGeneration;
import com.linkedin.kafka.cruisecontrol.monitor.metricdefinition.KafkaMetricDef;
import java.io.File;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.AdminClient;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;

public final class Harness {
  /** ResourceDistributionGoal.BALANCE_MARGIN in Cruise Control: the band is avg * (1 +- (t - 1) * 0.9). */
  static final double CC_BALANCE_MARGIN = 0.9;
  private static final List<Long> ONE_WINDOW = List.of(0L);

  private Harness() { }

  public static void main(String[] args) throws Exception {
    com.sun.management.OperatingSystemMXBean os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    long startCpu = os.getProcessCpuTime();  // JVM start-up, up to here
    long startUptime = ManagementFactory.getRuntimeMXBean().getUptime();
    Map<String, String> opt = parseArgs(args);
    double theta = Double.parseDouble(opt.getOrDefault("--theta", "0.8"));
    double eps = Double.parseDouble(opt.getOrDefault("--eps", "0.1"));
    boolean fast = opt.containsKey("--fast");
    ObjectMapper json = new ObjectMapper();
    long l0 = System.nanoTime();
    long lc0 = os.getProcessCpuTime();
    JsonNode snap = json.readTree(new File(opt.get("--snapshot")));

    Properties props = settings(theta, eps);
    KafkaCruiseControlConfig config = new KafkaCruiseControlConfig(props);
    ClusterModel model = buildModel(snap);
    snap = null;  // let the parsed JSON go before the optimizer runs
    List<Goal> goals = config.getConfiguredInstances(AnalyzerConfig.DEFAULT_GOALS_CONFIG, Goal.class);
    double loadWall = (System.nanoTime() - l0) / 1e9;
    double loadCpu = (os.getProcessCpuTime() - lc0) / 1e9;

    ObjectNode stats = json.createObjectNode();
    stats.put("jvm_startup_cpu_s", startCpu / 1e9);
    stats.put("jvm_startup_wall_s", startUptime / 1e3);
    stats.put("load_wall_s", loadWall);
    stats.put("load_cpu_s", loadCpu);
    stats.put("fast_mode", fast);
    ArrayNode goalNames = stats.putArray("goals");
    goals.forEach(g -> goalNames.add(g.name()));
    ObjectNode settings = stats.putObject("settings");
    props.stringPropertyNames().stream().sorted().forEach(k -> settings.put(k, props.getProperty(k)));

    Properties adminProps = new Properties();
    adminProps.put("bootstrap.servers", "127.0.0.1:9");  // never contacted: the optimizer does not call it
    try (AdminClient admin = AdminClient.create(adminProps)) {
      GoalOptimizer optimizer = new GoalOptimizer(config, null, Time.SYSTEM, new MetricRegistry(), null, admin);
      OptimizationOptions options = new OptimizationOptions(Collections.emptySet(), Collections.emptySet(),
          Collections.emptySet(), false, Collections.emptySet(), false, fast);
      System.gc();
      for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
        pool.resetPeakUsage();
      }
      ThreadMXBean threads = ManagementFactory.getThreadMXBean();
      long c0 = threads.getCurrentThreadCpuTime();
      long p0 = os.getProcessCpuTime();
      long t0 = System.nanoTime();
      OptimizerResult result = null;
      String failure = null;
      try {
        // with an explicit cluster model the optimizer runs every goal in this thread
        result = optimizer.optimizations(model, goals, new OperationProgress(), null, options);
      } catch (KafkaCruiseControlException e) {
        // a hard goal that cannot be met: Cruise Control proposes nothing; that is a result, not a crash
        failure = e.getClass().getSimpleName() + ": " + e.getMessage();
      }
      stats.put("wall_s", (System.nanoTime() - t0) / 1e9);
      stats.put("thread_cpu_s", (threads.getCurrentThreadCpuTime() - c0) / 1e9);
      stats.put("cpu_s", (os.getProcessCpuTime() - p0) / 1e9);  // every JVM thread (GC and JIT included)
      long peakHeap = 0;
      for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
        if (pool.getType() == MemoryType.HEAP) {
          peakHeap += pool.getPeakUsage().getUsed();
        }
      }
      stats.put("peak_heap_bytes", peakHeap);
      if (result == null) {
        stats.put("status", "failed");
        stats.put("failure", failure);
      } else {
        stats.put("status", "ok");
        writePlan(json, result, new File(opt.get("--plan")));
        stats.put("proposals", result.goalProposals().size());
        ArrayNode before = stats.putArray("violated_goals_before");
        result.violatedGoalsBeforeOptimization().forEach(before::add);
        ArrayNode violated = stats.putArray("violated_goals_after");
        result.violatedGoalsAfterOptimization().forEach(violated::add);
        ObjectNode perGoal = stats.putObject("goal_seconds");
        for (Goal g : goals) {
          perGoal.put(g.name(), result.optimizationDuration(g.name()).toNanos() / 1e9);
        }
      }
      json.writeValue(new File(opt.get("--stats")), stats);
    }
  }

  /** Cruise Control's defaults, except the capacity thresholds (theta) and the resource balance thresholds. */
  static Properties settings(double theta, double eps) {
    Properties p = new Properties();
    p.put("bootstrap.servers", "127.0.0.1:9");
    String t = Double.toString(theta);
    for (String r : new String[] {"cpu", "disk", "network.inbound", "network.outbound"}) {
      p.put(r + ".capacity.threshold", t);
      // our eps bounds |B(j) - avg| / avg; Cruise Control's band is avg * (1 +- (t - 1) * BALANCE_MARGIN)
      p.put(r + ".balance.threshold", Double.toString(1.0 + eps / CC_BALANCE_MARGIN));
    }
    // default.goals, hard.goals, replica/leader/topic count thresholds, max.replicas.per.broker: CC defaults.
    return p;
  }

  static ClusterModel buildModel(JsonNode snap) {
    ClusterModel model = new ClusterModel(new ModelGeneration(0, 0L), 1.0);
    Map<Integer, String> rackOf = new HashMap<>();
    List<Integer> dead = new ArrayList<>();
    for (JsonNode b : snap.get("brokers")) {
      int id = b.get("id").asInt();
      String host = b.hasNonNull("host") ? b.get("host").asText() : "host-" + id;
      // like Cruise Control's own LoadMonitor: a broker without broker.rack is placed in a rack named by its host
      String rack = b.hasNonNull("rack") ? b.get("rack").asText() : host;
      model.createRack(rack);
      JsonNode c = b.get("capacity");
      Map<Resource, Double> cap = new EnumMap<>(Resource.class);
      cap.put(Resource.CPU, c.get("cpu").asDouble());
      cap.put(Resource.DISK, c.get("disk").asDouble());
      cap.put(Resource.NW_IN, c.get("nw_in").asDouble());
      cap.put(Resource.NW_OUT, c.get("nw_out").asDouble());
      model.createBroker(rack, host, id, new BrokerCapacityInfo(cap), false);
      rackOf.put(id, rack);
      if (!b.get("alive").asBoolean(true)) {
        dead.add(id);
      }
    }
    for (JsonNode p : snap.get("partitions")) {
      TopicPartition tp = new TopicPartition(p.get("topic").asText(), p.get("partition").asInt());
      JsonNode reps = p.get("replicas");
      int leader = p.hasNonNull("leader") ? p.get("leader").asInt() : reps.get(0).asInt();
      AggregatedMetricValues leaderLoad = load(p.get("load").get("leader"));
      for (int i = 0; i < reps.size(); i++) {
        int b = reps.get(i).asInt();
        boolean isLeader = b == leader;
        // a replica on a dead broker is offline, as Cruise Control's own load monitor creates it
        model.createReplica(rackOf.get(b), b, tp, i, isLeader, dead.contains(b), null, false);
      }
      for (int i = 0; i < reps.size(); i++) {
        int b = reps.get(i).asInt();
        AggregatedMetricValues v = b == leader ? leaderLoad : load(p.get("load").get("follower"));
        model.setReplicaLoad(rackOf.get(b), b, tp, v, ONE_WINDOW);
      }
    }
    // as Cruise Control's load monitor does after populating the model: a dead broker's replicas become
    // eligible for self-healing only when the broker is marked dead after they exist
    for (int id : dead) {
      model.setBrokerState(id, Broker.State.DEAD);
    }
    return model;
  }

  /** One window; the whole value of a resource on its first metric, the others zero (as CC's tests do). */
  static AggregatedMetricValues load(JsonNode role) {
    AggregatedMetricValues values = new AggregatedMetricValues();
    Map<Resource, Double> by = Map.of(Resource.CPU, role.get("cpu").asDouble(), Resource.DISK,
        role.get("disk").asDouble(), Resource.NW_IN, role.get("nw_in").asDouble(), Resource.NW_OUT,
        role.get("nw_out").asDouble());
    for (Map.Entry<Resource, Double> e : by.entrySet()) {
      List<Short> ids = KafkaMetricDef.resourceToMetricIds(e.getKey());
      for (int k = 0; k < ids.size(); k++) {
        MetricValues mv = new MetricValues(1);
        mv.set(0, k == 0 ? e.getValue() : 0.0);
        values.add(ids.get(k), mv);
      }
    }
    return values;
  }

  static void writePlan(ObjectMapper json, OptimizerResult result, File out) throws Exception {
    ObjectNode plan = json.createObjectNode();
    plan.put("version", 1);
    ArrayNode parts = plan.putArray("partitions");
    for (ExecutionProposal proposal : result.goalProposals()) {
      ObjectNode e = parts.addObject();
      e.put("topic", proposal.topicPartition().topic());
      e.put("partition", proposal.topicPartition().partition());
      ArrayNode reps = e.putArray("replicas");
      int leader = proposal.newLeader().brokerId();
      reps.add(leader);  // replicas[0] is the intended leader
      for (ReplicaPlacementInfo r : proposal.newReplicas()) {
        if (r.brokerId() != leader) {
          reps.add(r.brokerId());
        }
      }
    }
    json.writeValue(out, plan);
  }

  static Map<String, String> parseArgs(String[] args) {
    Map<String, String> out = new HashMap<>();
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--fast")) {
        out.put("--fast", "true");
      } else if (i + 1 < args.length) {
        out.put(args[i], args[++i]);
      }
    }
    for (String need : new String[] {"--snapshot", "--plan", "--stats"}) {
      if (!out.containsKey(need)) {
        throw new IllegalArgumentException("missing " + need);
      }
    }
    return out;
  }
}
