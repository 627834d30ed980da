package io.github.kafkabalancer.assignor;

/** Primitive index sorts by a double key (stable merge sort; no boxing). */
final class Sorting {
    private Sorting() {
    }

    static void byKeyDescending(int[] idx, double[] key) {
        sort(idx, key, true);
    }

    static void byKeyAscending(int[] idx, double[] key) {
        sort(idx, key, false);
    }

    private static void sort(int[] idx, double[] key, boolean desc) {
        int n = idx.length;
        int[] src = idx;
        int[] dst = new int[n];
        for (int width = 1; width < n; width *= 2) {
            for (int lo = 0; lo < n; lo += 2 * width) {
                int mid = Math.min(lo + width, n);
                int hi = Math.min(lo + 2 * width, n);
                int i = lo;
                int j = mid;
                int o = lo;
                while (i < mid && j < hi) {
                    double a = key[src[i]];
                    double b = key[src[j]];
                    boolean takeRight = desc ? b > a : b < a;
                    dst[o++] = takeRight ? src[j++] : src[i++];
                }
                while (i < mid) {
                    dst[o++] = src[i++];
                }
                while (j < hi) {
                    dst[o++] = src[j++];
                }
            }
            int[] t = src;
            src = dst;
            dst = t;
        }
        if (src != idx) {
            System.arraycopy(src, 0, idx, 0, n);
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
