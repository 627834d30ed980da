"""``kafka-balancer demo``: applications that compose the local cluster (localcluster/) with the balancer
service (serve/). The live demo is :mod:`.story`."""
