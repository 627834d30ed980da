package io.github.kafkabalancer.assignor;

import java.util.BitSet;

/**
 * The input of the balanced algorithm as plain arrays, mirroring the Python reference
 * (kafka_balancer.consumer.problem.AssignmentProblem): members 0..M-1, partitions 0..P-1.
 * A subscription class groups partitions whose topics have the same subscribers; a partition may
 * go to exactly the members of its class.
 */
final class Problem {
    final int members;
    final int partitions;
    final double[] capacity;      // [M], > 0
    final double[] load;          // [P], >= 0
    final int[] prevOwner;        // [P], -1 = nobody
    final int[] classOf;          // [P]
    final int[][] classMembers;   // [K] member positions, ascending
    final BitSet[] classHas;      // [K] membership bitsets
    final int[][] memberClasses;  // [M] classes a member belongs to
    final int[] memberRack;       // [M] rack id, -1 = unknown
    final int[][] partitionRacks; // [P] rack ids of the replicas; empty = unknown
    final int[] topicOf;          // [P] topic position (topics in the caller's order)
    final int[] partitionNumber;  // [P]
    final int[] memberIdRank;     // [M] rank of the member id in sorted order (for range)

    Problem(double[] capacity, double[] load, int[] prevOwner, int[] classOf, int[][] classMembers,
            int[] memberRack, int[][] partitionRacks, int[] topicOf, int[] partitionNumber, int[] memberIdRank) {
        this.topicOf = topicOf;
        this.partitionNumber = partitionNumber;
        this.memberIdRank = memberIdRank;
        this.members = capacity.length;
        this.partitions = load.length;
        this.capacity = capacity;
        this.load = load;
        this.prevOwner = prevOwner;
        this.classOf = classOf;
        this.classMembers = classMembers;
        this.memberRack = memberRack;
        this.partitionRacks = partitionRacks;
        this.classHas = new BitSet[classMembers.length];
        int[] counts = new int[members];
        for (int k = 0; k < classMembers.length; k++) {
            classHas[k] = new BitSet(members);
            for (int m : classMembers[k]) {
                classHas[k].set(m);
                counts[m]++;
            }
        }
        this.memberClasses = new int[members][];
        for (int m = 0; m < members; m++) {
            memberClasses[m] = new int[counts[m]];
        }
        int[] fill = new int[members];
        for (int k = 0; k < classMembers.length; k++) {
            for (int m : classMembers[k]) {
                memberClasses[m][fill[m]++] = k;
            }
        }
    }

    boolean homogeneous() {
        return classMembers.length == 1;
    }

    boolean rackAware() {
        boolean anyMember = false;
        for (int r : memberRack) {
            if (r >= 0) {
                anyMember = true;
                break;
            }
        }
        if (!anyMember) {
            return false;
        }
        for (int[] racks : partitionRacks) {
            if (racks.length > 0) {
                return true;
            }
        }
        return false;
    }

    /** A copy with other loads (everything else shared; arrays are never mutated). */
    Problem withLoads(double[] newLoad) {
        return new Problem(capacity, newLoad, prevOwner, classOf, classMembers, memberRack, partitionRacks, topicOf,
                partitionNumber, memberIdRank);
    }

    /**
     * Lower bound on the best achievable max load / capacity: total over total capacity; each class's
     * load over its members' capacity; each partition over the largest capacity that may take it.
     */
    private double lowerBound = Double.NaN; // computed once (arrays are never mutated)

    double lowerBound() {
        if (Double.isNaN(lowerBound)) {
            lowerBound = computeLowerBound();
        }
        return lowerBound;
    }

    private double computeLowerBound() {
        if (partitions == 0) {
            return 0.0;
        }
        double totalLoad = 0;
        double totalCap = 0;
        for (double l : load) {
            totalLoad += l;
        }
        for (double c : capacity) {
            totalCap += c;
        }
        double best = totalLoad / totalCap;
        int k = classMembers.length;
        double[] classLoad = new double[k];
        double[] classMax = new double[k];
        for (int p = 0; p < partitions; p++) {
            classLoad[classOf[p]] += load[p];
            classMax[classOf[p]] = Math.max(classMax[classOf[p]], load[p]);
        }
        for (int c = 0; c < k; c++) {
            double capSum = 0;
            double capMax = 0;
            for (int m : classMembers[c]) {
                capSum += capacity[m];
                capMax = Math.max(capMax, capacity[m]);
            }
            if (capSum > 0) {
                best = Math.max(best, classLoad[c] / capSum);
                best = Math.max(best, classMax[c] / capMax);
            }
        }
        return best;
    }

    double[] memberLoads(int[] owner) {
        double[] out = new double[members];
        for (int p = 0; p < partitions; p++) {
            if (owner[p] >= 0) {
                out[owner[p]] += load[p];
            }
        }
        return out;
    }

    double maxNormalised(int[] owner) {
        double[] l = memberLoads(owner);
        double mx = 0;
        for (int m = 0; m < members; m++) {
            mx = Math.max(mx, l[m] / capacity[m]);
        }
        return mx;
    }

    int moves(int[] owner) {
        int n = 0;
        for (int p = 0; p < partitions; p++) {
            if (prevOwner[p] >= 0 && prevOwner[p] != owner[p]) {
                n++;
            }
        }
        return n;
    }
}
