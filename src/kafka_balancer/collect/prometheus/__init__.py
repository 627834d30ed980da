"""Sample records from a Prometheus server's history (``collect --prometheus URL --since 6h``).

``mapping`` says which series give which field, ``api`` talks to the server, ``fetch`` reads the span
in chunks, ``assemble`` turns history and the cluster's current placement into records, ``history``
runs it all. See docs/prometheus.md.
"""
