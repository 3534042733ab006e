"""The Spark patterns shared by every method, and the ground floor under them.

Ground floor (no Spark, imported by the kernels): ``rng`` (seeded hashing, named streams), ``exact``
(order-independent sums), ``groups`` (cutting work into contiguous groups). Spark floor: ``session``
(a session that works here), ``progress`` (progress logs), ``spark`` (broadcast a payload, run groups of
work as tasks, sum exactly with ``treeAggregate``, clean up).
"""
