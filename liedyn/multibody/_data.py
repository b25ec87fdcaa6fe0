"""The two handles every kernel takes: the model's packed arrays and a
workspace's scratch arrays, each one object that numba unboxes in O(1)
(a ``structref``) instead of some twenty-five arrays passed one by one; and
the closed form's scratch, a third handle a workspace makes on first use.

Field names are the public names of :class:`liedyn.Model` and
:class:`liedyn.Workspace`; their meaning and shapes are listed there and in
SPEC §1. As there, ``joint_*`` fields have a row per joint: a kernel visiting
body ``j`` reads its joint's row ``j − 1``, as it reads column ``j − 1`` of
``q``. Without compilation (``NUMBA_DISABLE_JIT=1``, or numba missing) the
handles are plain Python objects with the same fields, and the kernels run
interpreted on them.
"""

from .._jit import JIT

MODEL_FIELDS = ("floating_base", "body_parent", "joint_screw", "body_home", "body_mass",
                "body_com", "body_rot_inertia", "joint_armature", "joint_damping", "gravity")

WORKSPACE_FIELDS = ("order", "binom", "o", "d", "F", "C", "S", "V", "c", "Ic", "Pi", "W",
                    "MA", "U", "D", "L", "base_twist", "q", "base_wrench", "tau")

CLOSED_FORM_FIELDS = ("Mc", "Bc", "Wc", "MS", "BS", "Z", "G")


def _plain_handle(name, fields):
    def __init__(self, *values):
        for f, v in zip(fields, values):
            setattr(self, f, v)
    return type(name, (), {"__slots__": fields, "__init__": __init__})


if JIT:
    from numba.core import types
    from numba.experimental import structref

    class HandleType(types.StructRef):
        """Base of every handle's numba type: fields are typed non-literal, so
        that a handle built from ``False`` or ``0`` has the same type as one
        built from any other bool or int (one compiled kernel for all).
        Each handle subclasses it at module level, where numba's disk cache
        finds the class again in a later process."""

        def preprocess_fields(self, fields):
            return tuple((n, types.unliteral(t)) for n, t in fields)

    @structref.register
    class ModelDataType(HandleType):
        pass

    @structref.register
    class WorkspaceDataType(HandleType):
        pass

    @structref.register
    class ClosedFormDataType(HandleType):
        pass

    class ModelData(structref.StructRefProxy):
        """Compiled handle of a :class:`liedyn.Model`'s arrays."""

    class WorkspaceData(structref.StructRefProxy):
        """Compiled handle of a :class:`liedyn.Workspace`'s scratch."""

    class ClosedFormData(structref.StructRefProxy):
        """Compiled handle of a :class:`liedyn.Workspace`'s closed-form scratch."""

    structref.define_proxy(ModelData, ModelDataType, list(MODEL_FIELDS))
    structref.define_proxy(WorkspaceData, WorkspaceDataType, list(WORKSPACE_FIELDS))
    structref.define_proxy(ClosedFormData, ClosedFormDataType, list(CLOSED_FORM_FIELDS))
else:  # pragma: no cover - exercised with NUMBA_DISABLE_JIT=1
    ModelData = _plain_handle("ModelData", MODEL_FIELDS)
    WorkspaceData = _plain_handle("WorkspaceData", WORKSPACE_FIELDS)
    ClosedFormData = _plain_handle("ClosedFormData", CLOSED_FORM_FIELDS)
