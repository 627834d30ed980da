"""Maven artifact sets (one folder with a pom.xml each), fetched by `kafka-balancer setup-jvm`."""
