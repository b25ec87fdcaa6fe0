"""The paper's aerial manipulator, now :mod:`liedyn.examples.aerial_manipulator`
(installed with the library); this name stays for the experiments and tests."""

from liedyn.examples.aerial_manipulator import *  # noqa: F401,F403
from liedyn.examples.aerial_manipulator import __all__  # noqa: F401
