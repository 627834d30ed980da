"""kafka-balancer: keeps Apache Kafka clusters balanced on both sides of the broker."""

__version__ = "0.1.0"
