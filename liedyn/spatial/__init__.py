"""Spatial algebra: SE(3), its Lie algebra and adjoints (``se3``, public as
``liedyn.se3``), and the mass and inertia jets of rigid bodies (``inertia``)."""
