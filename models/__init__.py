"""Robot models built on :class:`liedyn.Model`."""
