"""The paper's reference motion, now :mod:`liedyn.examples.reference_motion`
(installed with the library); this name stays for the experiments and tests."""

from liedyn.examples.reference_motion import *  # noqa: F401,F403
from liedyn.examples.reference_motion import __all__  # noqa: F401
