"""The group-wide consumers: with several instances in one consumer group, each reduces the
finalized lists of its partitions to per-partition buckets (:mod:`streameval.group.collector`),
written to the state topic, and every instance feeds the whole group's buckets to the regression
detectors and the interleaving tests (:mod:`streameval.group.feed`), so every instance reports the
same group-wide result (DESIGN §9, §10)."""
