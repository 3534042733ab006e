"""The Spark patterns shared by every method, and the ground floor under them.

Ground floor (no Spark, imported by the kernels): ``rng`` (seeded hashing, named streams), ``exact``
(order-independent sums), ``groups`` (cutting work into contiguous groups). Spark floor: ``session``
(a session that works here), ``progress`` (one progress reporter for every long loop), ``engine`` (the two
kinds of session, classic and Spark Connect, and the distributed patterns both implement), ``spark`` (run
units of work in the driver or as grouped Spark tasks over a shipped payload, merged exactly).
"""
