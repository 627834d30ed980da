"""A deterministic discrete-event simulator of one Kafka consumer group (seed 000's experiment).

Modules: :mod:`.events` (event queue, injectable clock), :mod:`.config` (what to simulate),
:mod:`.group` (heartbeats, session timeout, eager/cooperative rebalance rounds), :mod:`.flow`
(partition backlogs, consumer service, end-to-end latency), :mod:`.run` (one simulation),
:mod:`.experiment` (the 6-consumer kill grid), :mod:`.plots`.
"""
