"""Bridges to other rigid-body libraries. Each submodule imports its library
only when used, so liedyn itself does not depend on them:
:mod:`liedyn.interop.pinocchio`."""
