"""Results of the constrained dynamics (SPEC §13)."""

from ..multibody.results import ForwardDynamicsResult

__all__ = ["ConstrainedForwardDynamicsResult"]


class _Forces:
    """``force_of(name)``: one constraint's rows of the force jets."""

    __slots__ = ()

    def force_of(self, name):
        """The force jet ``(order+1, m_c)`` of the constraint called ``name``
        (or its index), in the reported form of SPEC §13.1; batch results:
        ``(B, order+1, m_c)``."""
        cs = self.constraints
        c = cs.index(name) if isinstance(name, str) else name
        return self.force[..., cs.rows[c]]


class ConstrainedForwardDynamicsResult(_Forces, ForwardDynamicsResult):
    """Output of :func:`liedyn.constrained_forward_dynamics` of order ``r``.

    Attributes
    ----------
    base_twist, q, base_wrench, tau
        As :class:`liedyn.ForwardDynamicsResult`.
    force : (r+1, m)
        ``λ^(0..r)``, the constraint-force jets in the reported form (SPEC
        §13.1), rows as ``constraints.rows``.
    constraints : ConstraintSet
    rank : int
        Rank of ``J`` (``m`` unless the constraints are redundant).
    """

    __slots__ = ()
    _fields = ForwardDynamicsResult._fields + ("force", "constraints", "rank")
