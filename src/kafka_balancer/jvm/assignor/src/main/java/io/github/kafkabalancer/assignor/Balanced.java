package io.github.kafkabalancer.assignor;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The {@code balanced} algorithm, ported from the Python reference
 * (kafka_balancer.consumer.assignors.balanced, balanced_fill, balanced_improve), which stays the
 * reference; a cross-check test compares the two on seeded groups.
 *
 * <ol>
 *   <li>keep each partition with its previous owner;</li>
 *   <li>place the others heaviest first onto the eligible member with the least
 *       (load + l) / capacity (one heap per subscription class and capacity value). With racks on both
 *       sides, a member in one of the partition's replica racks is preferred while its load stays
 *       within the tolerance above the lower bound;</li>
 *   <li>local search off the heaviest member: the best single move or swap; moving a partition off
 *       its previous owner costs one move and is only done while the maximum is above
 *       (1 + tolerance) x the lower bound and the move budget lasts;</li>
 *   <li>safety net: if Kafka's range rule gives a lower maximum, run step 3 from it instead (when
 *       the budget allows).</li>
 * </ol>
 * Zero loads count as 1e-6 of the mean load, so idle partitions spread by count.
 */
final class Balanced {
    static final double DEFAULT_TOLERANCE = 0.01;

    /** maxMoves: -1 = unlimited; maxSteps: -1 = 8 M + 2000. */
    record Options(int maxMoves, double tolerance, int maxSteps) {
        static Options defaults() {
            return new Options(-1, DEFAULT_TOLERANCE, -1);
        }
    }

    private Balanced() {
    }

    static int[] assign(Problem raw, Options opt) {
        Problem pr = raw;
        if (raw.partitions > 0) {
            double sum = 0;
            for (double l : raw.load) {
                sum += l;
            }
            double mean = sum / raw.partitions;
            double tiny = 1e-6 * (mean > 0 ? mean : 1.0);
            double[] l2 = new double[raw.partitions];
            for (int p = 0; p < raw.partitions; p++) {
                l2[p] = raw.load[p] + tiny;
            }
            pr = raw.withLoads(l2);
        }
        long t0 = System.nanoTime();
        int[] owner = pr.prevOwner.clone();
        double[] cur = pr.memberLoads(owner);
        double lb = pr.lowerBound();
        fill(pr, owner, cur, lb, opt.tolerance());
        long t1 = System.nanoTime();
        owner = improve(pr, owner, opt);
        long t2 = System.nanoTime();
        int[] out = safetyNet(pr, owner, lb, opt);
        if (KafkaBalancerAssignor.TIMING) {
            System.err.printf("  fill %.1f ms, improve %.1f ms, net %.1f ms%n", (t1 - t0) / 1e6, (t2 - t1) / 1e6,
                    (System.nanoTime() - t2) / 1e6);
        }
        return out;
    }

    // ---- step 2: heaviest first --------------------------------------------------------------

    /** Least (cur + l) / capacity among a set of members: one min-heap (keyed by cur) per capacity value. */
    private static final class Chooser {
        final double[] caps;
        final IndexedHeap[] heaps;

        Chooser(int[] members, double[] capacity, double[] cur, int total, List<List<IndexedHeap>> heapsOf) {
            double[] all = new double[members.length];
            for (int i = 0; i < members.length; i++) {
                all[i] = capacity[members[i]];
            }
            Arrays.sort(all);
            int nd = 0;
            for (int i = 0; i < all.length; i++) {
                if (i == 0 || all[i] != all[i - 1]) {
                    all[nd++] = all[i];
                }
            }
            double[] distinct = Arrays.copyOf(all, nd);
            caps = distinct;
            heaps = new IndexedHeap[distinct.length];
            for (int i = 0; i < distinct.length; i++) {
                heaps[i] = new IndexedHeap(total);
            }
            for (int m : members) {
                int i = Arrays.binarySearch(distinct, capacity[m]);
                heaps[i].set(m, cur[m]);
                if (heapsOf != null) {
                    heapsOf.get(m).add(heaps[i]);
                }
            }
        }

        /** A member's load changed (only this chooser's heaps hold it). */
        void update(int m, double load) {
            for (IndexedHeap h : heaps) {
                if (h.contains(m)) {
                    h.set(m, load);
                }
            }
        }

        /** The best member for a partition of load l, or -1; its value in {@code value[0]}. */
        int pick(double l, double[] cur, double[] value) {
            int best = -1;
            double bestV = Double.POSITIVE_INFINITY;
            for (int i = 0; i < heaps.length; i++) {
                int m = heaps[i].top();
                if (m < 0) {
                    continue;
                }
                double v = (cur[m] + l) / caps[i];
                if (v < bestV) {
                    bestV = v;
                    best = m;
                }
            }
            value[0] = bestV;
            return best;
        }
    }

    static void fill(Problem pr, int[] owner, double[] cur, double lb, double tolerance) {
        int free = 0;
        for (int p = 0; p < pr.partitions; p++) {
            if (owner[p] < 0) {
                free++;
            }
        }
        if (free == 0) {
            return;
        }
        int[] items = new int[free];
        for (int p = 0, i = 0; p < pr.partitions; p++) {
            if (owner[p] < 0) {
                items[i++] = p;
            }
        }
        Sorting.byKeyDescending(items, pr.load);
        boolean racks = pr.rackAware();
        if (pr.homogeneous() && !racks) {
            items = waterFillTail(pr, items, owner, cur);
            if (items.length == 0) {
                return;
            }
        }
        List<List<IndexedHeap>> heapsOf = new ArrayList<>(pr.members);
        for (int m = 0; m < pr.members; m++) {
            heapsOf.add(new ArrayList<>(2));
        }
        Chooser[] choosers = new Chooser[pr.classMembers.length];
        for (int k = 0; k < choosers.length; k++) {
            choosers[k] = new Chooser(pr.classMembers[k], pr.capacity, cur, pr.members, heapsOf);
        }
        Chooser[][] rackChoosers = racks ? rackChoosers(pr, cur, heapsOf) : null;
        double allowed = lb * (1.0 + tolerance);
        double[] v = new double[1];
        for (int p : items) {
            int k = pr.classOf[p];
            double l = pr.load[p];
            int m = choosers[k].pick(l, cur, v);
            if (m < 0) {
                continue; // a class without members cannot happen (callers drop such topics)
            }
            if (rackChoosers != null && !onRack(pr, p, m)) {
                double limit = Math.max(v[0], allowed);
                int local = -1;
                double localV = Double.POSITIVE_INFINITY;
                for (int r : pr.partitionRacks[p]) {
                    Chooser c = rackChoosers[k][r];
                    if (c == null) {
                        continue;
                    }
                    int cand = c.pick(l, cur, v);
                    if (cand >= 0 && v[0] < localV) {
                        local = cand;
                        localV = v[0];
                    }
                }
                if (local >= 0 && localV <= limit) {
                    m = local;
                }
            }
            owner[p] = m;
            cur[m] += l;
            for (IndexedHeap h : heapsOf.get(m)) {
                h.set(m, cur[m]);
            }
        }
    }

    /** Partitions lighter than this fraction of a member's fair share skip the heap (see waterFillTail). */
    static final double HEAD_FRACTION = 1.0 / 64.0;

    /**
     * Identical subscriptions, as the reference does: the heavy head (partitions above HEAD_FRACTION of
     * the fair share) goes through the heap; then the light tail in one pass: members' room up to their
     * capacity share is laid end to end (scaled to the tail's load) and the tail's cumulative load is
     * cut at those boundaries. Returns the items still to place: none, or all when there is no tail.
     */
    private static int[] waterFillTail(Problem pr, int[] items, int[] owner, double[] cur) {
        double total = 0;
        for (double c : cur) {
            total += c;
        }
        for (int p : items) {
            total += pr.load[p];
        }
        double share = total / pr.members;
        int head = 0;
        while (head < items.length && pr.load[items[head]] > share * HEAD_FRACTION) {
            head++;
        }
        if (head == items.length) {
            return items;
        }
        int[] headItems = java.util.Arrays.copyOf(items, head);
        placeByHeap(pr, headItems, owner, cur);
        int nt = items.length - head;
        double tailSum = 0;
        for (int i = head; i < items.length; i++) {
            tailSum += pr.load[items[i]];
        }
        double capSum = 0;
        for (double c : pr.capacity) {
            capSum += c;
        }
        int[] takers = new int[pr.members];
        double[] room = new double[pr.members];
        int nTakers = 0;
        for (int m = 0; m < pr.members; m++) {
            double r = Math.max(pr.capacity[m] * (total / capSum) - cur[m], 0.0);
            if (r > 0) {
                takers[nTakers] = m;
                room[nTakers++] = r;
            }
        }
        if (nTakers == 0) {
            int best = 0;
            for (int m = 1; m < pr.members; m++) {
                if (cur[m] / pr.capacity[m] < cur[best] / pr.capacity[best]) {
                    best = m;
                }
            }
            takers[0] = best;
            room[0] = tailSum;
            nTakers = 1;
        }
        double[] bounds = new double[nTakers];
        double acc = 0;
        for (int i = 0; i < nTakers; i++) {
            acc += room[i];
            bounds[i] = acc;
        }
        double scale = tailSum / bounds[nTakers - 1];
        for (int i = 0; i < nTakers; i++) {
            bounds[i] *= scale;
        }
        double cum = 0;
        for (int i = head; i < items.length; i++) {
            int p = items[i];
            double l = pr.load[p];
            cum += l;
            double mid = cum - l / 2.0;
            int slot = Math.min(upperBound(bounds, mid), nTakers - 1);
            int m = takers[slot];
            owner[p] = m;
            cur[m] += l;
        }
        return new int[0];
    }

    /** First index whose value is > x (numpy searchsorted, side right). */
    private static int upperBound(double[] sorted, double x) {
        int lo = 0;
        int hi = sorted.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (sorted[mid] <= x) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** Homogeneous, no racks: each item to the least (cur + l) / capacity member, heaviest first. */
    private static void placeByHeap(Problem pr, int[] items, int[] owner, double[] cur) {
        if (items.length == 0) {
            return;
        }
        List<List<IndexedHeap>> none = null;
        Chooser c = new Chooser(pr.classMembers[0], pr.capacity, cur, pr.members, none);
        double[] v = new double[1];
        for (int p : items) {
            int m = c.pick(pr.load[p], cur, v);
            owner[p] = m;
            cur[m] += pr.load[p];
            c.update(m, cur[m]);
        }
    }

    static boolean onRack(Problem pr, int p, int m) {
        int r = pr.memberRack[m];
        if (r < 0) {
            return false;
        }
        for (int x : pr.partitionRacks[p]) {
            if (x == r) {
                return true;
            }
        }
        return false;
    }

    private static Chooser[][] rackChoosers(Problem pr, double[] cur, List<List<IndexedHeap>> heapsOf) {
        int nRacks = 0;
        for (int r : pr.memberRack) {
            nRacks = Math.max(nRacks, r + 1);
        }
        for (int[] rs : pr.partitionRacks) {
            for (int r : rs) {
                nRacks = Math.max(nRacks, r + 1);
            }
        }
        Chooser[][] out = new Chooser[pr.classMembers.length][nRacks];
        for (int k = 0; k < pr.classMembers.length; k++) {
            for (int r = 0; r < nRacks; r++) {
                final int rr = r;
                int[] mem = Arrays.stream(pr.classMembers[k]).filter(m -> pr.memberRack[m] == rr).toArray();
                if (mem.length > 0) {
                    out[k][r] = new Chooser(mem, pr.capacity, cur, pr.members, heapsOf);
                }
            }
        }
        return out;
    }

    // ---- step 3: local search -------------------------------------------------------------------

    /**
     * The best step seen so far. Candidates come in vectors (one class's single moves; its swaps with
     * the nearest partner below, then above the ideal transfer); {@link #pick} chooses within a vector as
     * the reference's {@code _pick} does, and a vector's choice replaces the best only when strictly
     * better by (gain, -cost, -moved load), as the reference's {@code _Best.offer}.
     */
    private static final class Best {
        double gain;
        int cost;
        double moved;
        int p = -1;
        int q = -1;
        int b = -1;

        void offer(double g, int c, double ml, int pp, int qq, int bb) {
            boolean better = g > gain || (g == gain && (c < cost || (c == cost && ml < moved)));
            if (better) {
                gain = g;
                cost = c;
                moved = ml;
                p = pp;
                q = qq;
                b = bb;
            }
        }
    }

    /** Candidate vectors (reused between steps). */
    private static final class Cands {
        double[] gain = new double[16];
        int[] cost = new int[16];
        double[] moved = new double[16];
        int[] p = new int[16];
        int[] q = new int[16];
        int n;

        void reset(int capacity) {
            n = 0;
            if (gain.length < capacity) {
                int c = Math.max(capacity, 2 * gain.length);
                gain = new double[c];
                cost = new int[c];
                moved = new double[c];
                p = new int[c];
                q = new int[c];
            }
        }

        void add(double g, int c, double ml, int pp, int qq) {
            gain[n] = g;
            cost[n] = c;
            moved[n] = ml;
            p[n] = pp;
            q[n] = qq;
            n++;
        }

        /**
         * Index of the best candidate (gain &gt; 0 and cost allowed; highest gain, near ties within 1e-12
         * relative broken by lower cost, then lower moved load, then position); -1 if none.
         */
        int pick(boolean allowCost, double remaining) {
            double maxCost = allowCost ? remaining : 0;
            double top = Double.NEGATIVE_INFINITY;
            for (int i = 0; i < n; i++) {
                if (gain[i] > 0 && cost[i] <= maxCost && gain[i] > top) {
                    top = gain[i];
                }
            }
            if (top == Double.NEGATIVE_INFINITY) {
                return -1;
            }
            double near = top - 1e-12 * Math.max(1.0, Math.abs(top));
            int best = -1;
            for (int i = 0; i < n; i++) {
                if (gain[i] > 0 && cost[i] <= maxCost && gain[i] >= near
                        && (best < 0 || cost[i] < cost[best] || (cost[i] == cost[best] && moved[i] < moved[best]))) {
                    best = i;
                }
            }
            return best;
        }

        void offerBest(Best best, boolean allowCost, double remaining, int b) {
            int i = pick(allowCost, remaining);
            if (i >= 0) {
                best.offer(gain[i], cost[i], moved[i], p[i], q[i], b);
            }
        }
    }

    static int[] improve(Problem pr, int[] start, Options opt) {
        int[] owner = start.clone();
        int nm = pr.members;
        if (nm < 2 || pr.partitions == 0) {
            return owner;
        }
        double[] load = pr.load;
        double[] cap = pr.capacity;
        int[] prev = pr.prevOwner;
        double[] memberLoad = pr.memberLoads(owner);
        double lb = pr.lowerBound();
        double minGain = 1e-4 * lb;
        double stopCostly = (1.0 + opt.tolerance()) * lb;
        double remaining = opt.maxMoves() < 0 ? Double.POSITIVE_INFINITY : opt.maxMoves() - pr.moves(owner);
        IntList[] parts = new IntList[nm];
        for (int m = 0; m < nm; m++) {
            parts[m] = new IntList();
        }
        for (int p = 0; p < pr.partitions; p++) {
            parts[owner[p]].add(p);
        }
        boolean[] stuck = new boolean[nm];
        IndexedHeap active = new IndexedHeap(nm); // -norm of members not stuck (ties: lowest position)
        IndexedHeap all = new IndexedHeap(nm);    // -norm of every member
        IndexedHeap[] classMin = new IndexedHeap[pr.classMembers.length];
        for (int k = 0; k < classMin.length; k++) {
            classMin[k] = new IndexedHeap(nm);
        }
        for (int m = 0; m < nm; m++) {
            double n = memberLoad[m] / cap[m];
            active.set(m, -n);
            all.set(m, -n);
            for (int k : pr.memberClasses[m]) {
                classMin[k].set(m, n);
            }
        }
        int limit = opt.maxSteps() >= 0 ? opt.maxSteps() : 8 * nm + 2000;
        boolean homogeneous = pr.homogeneous();
        int steps = 0;
        boolean[] classSeen = new boolean[pr.classMembers.length];
        int[] classList = new int[pr.classMembers.length];
        Cands cands = new Cands();
        double[] lps = new double[16];
        while (steps < limit) {
            int a = active.top();
            if (a < 0) {
                break;
            }
            double na = memberLoad[a] / cap[a];
            if (na <= lb * (1.0 + 1e-9)) {
                break;
            }
            double globalMax = -all.keyOf(all.top());
            boolean allowCost = na > stopCostly && remaining > 0 && na >= globalMax * (1.0 - 1e-12);
            IntList pa = parts[a];
            if (pa.size == 0) {
                stuck[a] = true;
                active.remove(a);
                continue;
            }
            Best best = new Best();
            double la = memberLoad[a];
            double ca = cap[a];
            // the classes among a's partitions, ascending (as the reference's np.unique)
            int nk = 0;
            if (homogeneous) {
                classList[nk++] = 0;
            } else {
                for (int i = 0; i < pa.size; i++) {
                    int k = pr.classOf[pa.data[i]];
                    if (!classSeen[k]) {
                        classSeen[k] = true;
                        classList[nk++] = k;
                    }
                }
                Arrays.sort(classList, 0, nk);
                for (int i = 0; i < nk; i++) {
                    classSeen[classList[i]] = false;
                }
            }
            for (int ki = 0; ki < nk; ki++) {
                int k = classList[ki];
                int b = classMin[k].topExcept(a);
                if (b < 0) {
                    continue;
                }
                int[] pk = homogeneous ? pa.toArray() : pa.filterClass(pr.classOf, k);
                double lbLoad = memberLoad[b];
                double cb = cap[b];
                // single moves a -> b
                cands.reset(pk.length);
                for (int p : pk) {
                    double lp = load[p];
                    double newMax = Math.max((la - lp) / ca, (lbLoad + lp) / cb);
                    int c = (prev[p] == a ? 1 : 0) - (prev[p] == b ? 1 : 0);
                    cands.add(na - newMax, c, lp, p, -1);
                }
                cands.offerBest(best, allowCost, remaining, b);
                // swaps (p in a) <-> (q in b, of a topic a may take): p nearest to q + the ideal transfer
                IntList pbAll = parts[b];
                if (pbAll.size == 0) {
                    continue;
                }
                Sorting.byKeyAscending(pk, load);
                if (lps.length < pk.length) {
                    lps = new double[Math.max(pk.length, 2 * lps.length)];
                }
                for (int j = 0; j < pk.length; j++) {
                    lps[j] = load[pk[j]];
                }
                double ideal = (la * cb - lbLoad * ca) / (ca + cb);
                for (int off = 0; off >= -1; off--) {
                    cands.reset(pbAll.size);
                    for (int j = 0; j < pbAll.size; j++) {
                        int q = pbAll.data[j];
                        if (!homogeneous && !pr.classHas[pr.classOf[q]].get(a)) {
                            continue;
                        }
                        double lq = load[q];
                        int pos = Sorting.lowerBound(lps, pk.length, lq + ideal);
                        int jj = Math.min(Math.max(pos + off, 0), pk.length - 1);
                        double d = lps[jj] - lq;
                        int pi = pk[jj];
                        int c = (prev[pi] == a ? 1 : 0) - (prev[pi] == b ? 1 : 0)
                                + (prev[q] == b ? 1 : 0) - (prev[q] == a ? 1 : 0);
                        double g = d > 0 ? na - Math.max((la - d) / ca, (lbLoad + d) / cb) : Double.NEGATIVE_INFINITY;
                        cands.add(g, c, lps[jj] + lq, pi, q);
                    }
                    cands.offerBest(best, allowCost, remaining, b);
                }
            }
            if (best.p < 0 || best.gain <= (best.cost > 0 ? 0.0 : minGain)) {
                stuck[a] = true;
                active.remove(a);
                continue;
            }
            int b = best.b;
            move(best.p, a, b, owner, memberLoad, parts, load);
            if (best.q >= 0) {
                move(best.q, b, a, owner, memberLoad, parts, load);
            }
            remaining -= best.cost;
            stuck[b] = false;
            for (int x : new int[] {a, b}) {
                double n = memberLoad[x] / cap[x];
                all.set(x, -n);
                if (!stuck[x]) {
                    active.set(x, -n);
                }
                for (int k : pr.memberClasses[x]) {
                    classMin[k].set(x, n);
                }
            }
            steps++;
        }
        return owner;
    }

    private static void move(int p, int from, int to, int[] owner, double[] memberLoad, IntList[] parts,
                             double[] load) {
        owner[p] = to;
        memberLoad[from] -= load[p];
        memberLoad[to] += load[p];
        parts[from].removeValue(p);
        parts[to].add(p);
    }

    // ---- step 4: safety net -----------------------------------------------------------------------

    private static int[] safetyNet(Problem pr, int[] start0, double lb, Options opt) {
        int[] owner = start0;
        double ours = pr.maxNormalised(owner);
        if (ours <= lb * (1.0 + 1e-9)) {
            return owner;
        }
        boolean fresh = true;
        for (int o : pr.prevOwner) {
            if (o >= 0) {
                fresh = false;
                break;
            }
        }
        if (!fresh && ours <= (1.0 + opt.tolerance()) * lb) {
            return owner;
        }
        for (int alt = 0; alt < 2; alt++) {
            int[] start = alt == 0 ? range(pr) : paper(pr);
            if (pr.maxNormalised(start) >= ours) {
                continue;
            }
            if (opt.maxMoves() >= 0 && pr.moves(start) > opt.maxMoves()) {
                continue;
            }
            int[] cand = improve(pr, start, opt);
            double mx = pr.maxNormalised(cand);
            if (mx < ours) {
                owner = cand;
                ours = mx;
            }
        }
        return owner;
    }

    /** Partition positions per topic, in partition-number order. */
    private static int[][] byTopic(Problem pr) {
        int topics = 0;
        for (int t : pr.topicOf) {
            topics = Math.max(topics, t + 1);
        }
        int[] count = new int[topics];
        for (int t : pr.topicOf) {
            count[t]++;
        }
        int[][] out = new int[topics][];
        for (int t = 0; t < topics; t++) {
            out[t] = new int[count[t]];
        }
        int[] fill = new int[topics];
        for (int p = 0; p < pr.partitions; p++) {
            out[pr.topicOf[p]][fill[pr.topicOf[p]]++] = p;
        }
        for (int[] ps : out) {
            sortBy(ps, pr.partitionNumber);
        }
        return out;
    }

    /** Stable sort of positions by an int key (small arrays: insertion sort). */
    private static void sortBy(int[] idx, int[] key) {
        for (int i = 1; i < idx.length; i++) {
            int v = idx[i];
            int j = i - 1;
            while (j >= 0 && key[idx[j]] > key[v]) {
                idx[j + 1] = idx[j];
                j--;
            }
            idx[j + 1] = v;
        }
    }

    /** A topic's subscribers by member id (positions are in id order: ranks). */
    private static int[] subscribersById(Problem pr, int firstPartition) {
        int[] mem = pr.classMembers[pr.classOf[firstPartition]].clone();
        sortBy(mem, pr.memberIdRank);
        return mem;
    }

    /**
     * Seed 000's dealing rule, as the reference's {@code paper} assignor with no start times known (the
     * broker has none): per topic, partitions heaviest first, members by id; with a partition above the
     * topic's mean, members take chunks of ceil(n / m) in reverse load order (the last member the rest);
     * otherwise the first m' members (m' the largest divisor of n not above m) take n / m' each in order.
     */
    static int[] paper(Problem pr) {
        int[] owner = new int[pr.partitions];
        for (int[] inOrder : byTopic(pr)) {
            int n = inOrder.length;
            if (n == 0) {
                continue;
            }
            int[] mem = subscribersById(pr, inOrder[0]);
            int m = mem.length;
            int[] heavy = inOrder.clone(); // partition order, then stable by load descending
            Sorting.byKeyDescending(heavy, pr.load);
            double sum = 0;
            for (int p : heavy) {
                sum += pr.load[p];
            }
            double mean = sum / n;
            boolean overloaded = false;
            for (int p : heavy) {
                overloaded |= pr.load[p] > mean;
            }
            if (overloaded) {
                int q = (n + m - 1) / m;
                for (int r = 0; r < n; r++) {
                    int p = heavy[n - 1 - r]; // lightest first
                    owner[p] = mem[n <= m ? r : Math.min(r / q, m - 1)];
                }
            } else {
                int working = 1;
                for (int d = Math.min(n, m); d > 0; d--) {
                    if (n % d == 0) {
                        working = d;
                        break;
                    }
                }
                int k = Math.max(n / working, 1);
                for (int r = 0; r < n; r++) {
                    owner[inOrder[r]] = mem[r / k];
                }
            }
        }
        return owner;
    }

    /** Kafka's range rule: per topic, members by id, n / m consecutive partitions, the first n % m one more. */
    static int[] range(Problem pr) {
        int[] owner = new int[pr.partitions];
        for (int[] ps : byTopic(pr)) {
            int n = ps.length;
            if (n == 0) {
                continue;
            }
            int[] mem = subscribersById(pr, ps[0]);
            int m = mem.length;
            int q = n / m;
            int rem = n % m;
            int boundary = rem * (q + 1);
            for (int r = 0; r < n; r++) {
                int slot = r < boundary ? r / (q + 1) : rem + (r - boundary) / Math.max(q, 1);
                owner[ps[r]] = mem[slot];
            }
        }
        return owner;
    }
}
