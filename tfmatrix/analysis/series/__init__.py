"""Every kept run over time: when a variant (or a whole cell) got slower, and by how much.

``statistics.steps`` finds the steps in one series of run means (each run's
mean log time and that mean's variance; pure, no file read) and
``common_move`` makes one series of a whole cell or file; ``entries`` makes the archive's record of
a cell's run (``results.archive.KeptRun``), ``answers`` the series of the
kept runs per testbed, cell and request.
"""
