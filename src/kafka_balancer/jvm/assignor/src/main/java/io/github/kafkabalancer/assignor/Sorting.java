package io.github.kafkabalancer.assignor;

import java.util.Arrays;

/** Primitive index sorts by a double key (stable; no boxing). */
final class Sorting {
    private Sorting() {
    }

    static void byKeyDescending(int[] idx, double[] key) {
        if (idx.length >= 256 && nonNegative(idx, key)) {
            radixDescending(idx, key);
        } else {
            sort(idx, key, true);
        }
    }

    private static boolean nonNegative(int[] idx, double[] key) {
        for (int i : idx) {
            double k = key[i];
            if (!(k >= 0) || Double.doubleToRawLongBits(k) < 0) { // NaN or -0.0
                return false;
            }
        }
        return true;
    }

    private static final int DIGIT = 11;
    private static final int BUCKETS = 1 << DIGIT;

    /**
     * Stable LSD radix sort, heaviest first, for keys &gt;= 0 (their IEEE bits order as the values do):
     * the same order as the merge sort (ties keep their input order), in 6 linear passes.
     */
    private static void radixDescending(int[] idx, double[] key) {
        int n = idx.length;
        long[] k = new long[n];
        for (int i = 0; i < n; i++) {
            k[i] = ~Double.doubleToRawLongBits(key[idx[i]]); // larger value = smaller complemented bits
        }
        long[] k2 = new long[n];
        int[] i2 = new int[n];
        int[] count = new int[BUCKETS];
        int[] srcI = idx;
        long[] srcK = k;
        for (int shift = 0; shift < 64; shift += DIGIT) {
            Arrays.fill(count, 0);
            for (int i = 0; i < n; i++) {
                count[(int) ((srcK[i] >>> shift) & (BUCKETS - 1))]++;
            }
            int sum = 0;
            for (int b = 0; b < BUCKETS; b++) {
                int c = count[b];
                count[b] = sum;
                sum += c;
            }
            for (int i = 0; i < n; i++) {
                int b = (int) ((srcK[i] >>> shift) & (BUCKETS - 1));
                int o = count[b]++;
                k2[o] = srcK[i];
                i2[o] = srcI[i];
            }
            long[] tk = srcK;
            srcK = k2;
            k2 = tk;
            int[] ti = srcI;
            srcI = i2;
            i2 = ti;
        }
        if (srcI != idx) {
            System.arraycopy(srcI, 0, idx, 0, n);
        }
    }

    static void byKeyAscending(int[] idx, double[] key) {
        sort(idx, key, false);
    }

    private static final int RUN = 16;

    /**
     * Stable merge sort of idx by key[idx]. The keys travel with the indices (sequential memory access
     * instead of one indirection per comparison); runs of 16 are first sorted by insertion.
     */
    private static void sort(int[] idx, double[] key, boolean desc) {
        int n = idx.length;
        double[] k = new double[n];
        for (int i = 0; i < n; i++) {
            k[i] = desc ? -key[idx[i]] : key[idx[i]]; // ascending on -key = descending, ties kept
        }
        for (int lo = 0; lo < n; lo += RUN) {
            int hi = Math.min(lo + RUN, n);
            for (int i = lo + 1; i < hi; i++) {
                double kv = k[i];
                int iv = idx[i];
                int j = i - 1;
                while (j >= lo && k[j] > kv) {
                    k[j + 1] = k[j];
                    idx[j + 1] = idx[j];
                    j--;
                }
                k[j + 1] = kv;
                idx[j + 1] = iv;
            }
        }
        if (n <= RUN) {
            return;
        }
        int[] srcI = idx;
        double[] srcK = k;
        int[] dstI = new int[n];
        double[] dstK = new double[n];
        for (int width = RUN; width < n; width *= 2) {
            for (int lo = 0; lo < n; lo += 2 * width) {
                int mid = Math.min(lo + width, n);
                int hi = Math.min(lo + 2 * width, n);
                int i = lo;
                int j = mid;
                int o = lo;
                while (i < mid && j < hi) {
                    if (srcK[j] < srcK[i]) {
                        dstK[o] = srcK[j];
                        dstI[o++] = srcI[j++];
                    } else {
                        dstK[o] = srcK[i];
                        dstI[o++] = srcI[i++];
                    }
                }
                System.arraycopy(srcI, i, dstI, o, mid - i);
                System.arraycopy(srcK, i, dstK, o, mid - i);
                o += mid - i;
                System.arraycopy(srcI, j, dstI, o, hi - j);
                System.arraycopy(srcK, j, dstK, o, hi - j);
            }
            int[] ti = srcI;
            srcI = dstI;
            dstI = ti;
            double[] tk = srcK;
            srcK = dstK;
            dstK = tk;
        }
        if (srcI != idx) {
            System.arraycopy(srcI, 0, idx, 0, n);
        }
    }

    /** First index whose value is >= x in an ascending array (numpy searchsorted, side left). */
    static int lowerBound(double[] sorted, double x) {
        return lowerBound(sorted, sorted.length, x);
    }

    /** lowerBound over the first n values. */
    static int lowerBound(double[] sorted, int n, double x) {
        int lo = 0;
        int hi = n;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (sorted[mid] < x) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }
}
