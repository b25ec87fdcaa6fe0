"""A motion to draw: body poses sampled in time, with the contacts' points,
forces, modes and events of a run with contacts.

Glossary
--------
==================  ==============  ==========================================
``t``               (T,)            sample times, non-decreasing (an event's
                                    two samples share its time)
``C₀``              (T, 4, 4)       base pose in the world
``q``               (T, n)          joint positions
``C_j``             (T, N, 4, 4)    body poses in the world (SPEC §2)
``p_c``             (T, nc, 3)      contact points: the sphere's point
                                    nearest its plane, ``c − r n``
``f_c``             (T, nc, 3)      world force on each contact at ``p_c``
==================  ==============  ==========================================

Body poses are composed joint by joint, ``C_j = C_{p(j)} A_j X_j(q_j)``
(SPEC §2: ``A_j`` the body's origin in its parent at ``q = 0``, ``X_j`` the
joint's motion in the body frame: a rotation about the axis through
``joint_point``, or a translation along the axis), vectorised over the
samples in NumPy, so drawing needs no compiled kernel.
"""

from dataclasses import dataclass

import numpy as np

from ..multibody.model import JOINT_REVOLUTE, check_model
from .visuals import Visual

__all__ = ["Animation", "animation"]

MODE_NAMES = ("open", "closed", "sticking", "sliding")


@dataclass(frozen=True)
class Animation:
    """What :func:`liedyn.viewer.export_html` draws (built by :func:`animation`).

    Attributes
    ----------
    title : str
    time : (T,)
    body_pose : (T, N, 4, 4)
        ``C_j`` of every body at every kept sample.
    frame_body : (F,) int, frame_offset : (F, 4, 4), frame_names : tuple
        The model's frames (drawn: those in ``shown_frames``).
    shown_frames : tuple of int
        Frames drawn as axis triads.
    visuals : tuple of Visual
    contact_names : tuple of str
    contact_point : (T, nc, 3)
    contact_force : (T, nc, 3)
    contact_mode : (T, nc) int8
        0 open, 1 closed, 2 sticking, 3 sliding.
    events : tuple of (time, kind, contact name, point (3,))
    """

    title: str
    time: np.ndarray
    body_pose: np.ndarray
    frame_body: np.ndarray
    frame_offset: np.ndarray
    frame_names: tuple
    shown_frames: tuple
    visuals: tuple
    contact_names: tuple
    contact_point: np.ndarray
    contact_force: np.ndarray
    contact_mode: np.ndarray
    events: tuple

    def frame_pose(self, f):
        """Poses ``(T, 4, 4)`` of frame ``f`` (index)."""
        return self.body_pose[:, self.frame_body[f]] @ self.frame_offset[f]


def _rotations(axis, angle):
    """Rodrigues, vectorised: ``(T, 3, 3)`` rotations by ``angle`` (T,)
    about the unit ``axis`` (3,)."""
    K = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]],
                  [-axis[1], axis[0], 0.0]])
    s, c = np.sin(angle)[:, None, None], np.cos(angle)[:, None, None]
    return np.eye(3) + s * K + (1.0 - c) * (K @ K)


def body_poses(model, base_pose, q):
    """``C_j`` (T, N, 4, 4) of ``model`` at base poses ``C₀`` (T, 4, 4) and
    joint positions ``q`` (T, n): ``C_j = C_{p(j)} A_j X_j(q_j)`` (SPEC §2)."""
    T = q.shape[0]
    C = np.empty((T, model.n_bodies, 4, 4))
    C[:, 0] = base_pose
    for i in range(model.n_joints):
        j = i + 1
        X = np.zeros((T, 4, 4))
        X[:, 3, 3] = 1.0
        a = model.joint_axis[i]
        if model.joint_type[i] == JOINT_REVOLUTE:
            R = _rotations(a, q[:, i])
            p = model.joint_point[i]
            X[:, :3, :3] = R
            X[:, :3, 3] = p - R @ p                       # rotation about the axis through p
        else:
            X[:, :3, :3] = np.eye(3)
            X[:, :3, 3] = q[:, i, None] * a
        C[:, j] = C[:, model.body_parent[j]] @ model.body_origin[j] @ X
    return C


def _array(x, name, shape, what):
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name}: expected numbers {what}, got {type(x).__name__}") from None
    if a.shape != shape:
        raise ValueError(f"{name}: expected shape {shape} {what}, got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: has values that are not finite")
    return a


def _samples(t, fps, keep):
    """Indices of the samples kept: the last at or before each tick of a
    ``fps`` grid, the first and last, and ``keep`` (event samples)."""
    ticks = np.arange(t[0], t[-1], 1.0 / fps) if t[-1] > t[0] else t[:1]
    idx = np.searchsorted(t, ticks, side="right") - 1
    return np.unique(np.concatenate([idx, [0, len(t) - 1], keep]).astype(np.int64))


def animation(model, trajectory=None, *, time=None, base_pose=None, q=None, visuals=(),
              contacts=None, frames=(), fps=200.0, title=""):
    """Sample a motion of ``model`` for drawing.

    Parameters
    ----------
    model : Model
    trajectory : liedyn.Trajectory, optional
        A :func:`liedyn.simulate` result; else give ``time``, ``q`` and
        (floating base) ``base_pose``.
    time : (T,)
        Non-decreasing sample times (s).
    base_pose : (T, 4, 4)
        ``C₀`` at each sample (a fixed base: ``None``, its home pose).
    q : (T, n) or (T, k, n)
        Joint positions, or jets whose row 0 is read.
    visuals : sequence of Visual
        From :func:`urdf_visuals`, :func:`mjcf_visuals`, :func:`primitive_visual`.
    contacts : sequence of liedyn.PointContact, optional
        The contacts the run was simulated with (``trajectory.contact_names``
        must name them in order): their points, forces, modes and events are drawn.
    frames : sequence of str or int
        Frames drawn as axis triads (x red, y green, z blue).
    fps : float
        Samples kept per second of motion (event samples are always kept).
    title : str

    Returns
    -------
    Animation

    Raises
    ------
    TypeError, ValueError
        A wrong shape or non-finite value (naming the argument and the
        shape expected for the model), times that decrease, both or neither
        of ``trajectory`` and ``q``, contacts that do not match the run, an
        unknown frame, a visual on a frame the model does not have.
    """
    model = check_model(model)
    if trajectory is not None:
        if q is not None or time is not None or base_pose is not None:
            raise ValueError("trajectory: give a trajectory or time/base_pose/q, not both")
        for field in ("time", "base_pose", "q"):
            if not hasattr(trajectory, field):
                raise TypeError(f"trajectory: expected a liedyn.Trajectory, got "
                                f"{type(trajectory).__name__}")
        time, base_pose, q = trajectory.time, trajectory.base_pose, trajectory.q
    elif q is None or time is None:
        raise ValueError("q, time: required without a trajectory")
    t = np.asarray(time, dtype=float)
    if t.ndim != 1 or t.size == 0:
        raise ValueError(f"time: expected shape (T,) with T ≥ 1, got {t.shape}")
    _array(t, "time", t.shape, "")
    if np.any(np.diff(t) < 0):
        raise ValueError("time: must not decrease")
    T, n = t.size, model.n_joints
    qa = np.asarray(q, dtype=float) if not isinstance(q, (str, bytes)) else None
    if qa is not None and qa.ndim == 3 and qa.shape[0] == T and qa.shape[2] == n:
        qa = qa[:, 0]
    q = _array(qa if qa is not None else q, "q", (T, n),
               f"(T, n) = ({T}, {n}) or jets (T, k, {n}) for {T} times and a model of "
               f"{n} joints")
    if base_pose is None:
        if model.floating_base:
            raise ValueError("base_pose: required for a floating-base model, (T, 4, 4)")
        base_pose = np.broadcast_to(model.home_pose, (T, 4, 4))
    C0 = _array(base_pose, "base_pose", (T, 4, 4), f"for {T} times")
    if not (isinstance(fps, (int, float, np.number)) and np.isfinite(fps) and fps > 0):
        raise ValueError(f"fps: expected a positive number, got {fps!r}")
    if not isinstance(title, str):
        raise TypeError(f"title: expected a str, got {type(title).__name__}")
    visuals = tuple(visuals)
    for v in visuals:
        if not isinstance(v, Visual):
            raise TypeError(f"visuals: expected liedyn.viewer.Visual items, got "
                            f"{type(v).__name__}")
        if not 0 <= v.frame < model.n_frames:
            raise ValueError(f"visuals: {v.name!r} is on frame {v.frame}, which a model of "
                             f"{model.n_frames} frames does not have")
    shown = []
    for f in frames:
        if isinstance(f, str):
            if ("frame", f) not in model._index:
                raise ValueError(f"frames: the model has no frame {f!r}; its frames: "
                                 f"{', '.join(map(repr, model.frame_names[:8]))}"
                                 f"{' …' if model.n_frames > 8 else ''}")
            shown.append(model.frame_index(f))
        elif isinstance(f, (int, np.integer)) and not isinstance(f, bool) \
                and 0 <= f < model.n_frames:
            shown.append(int(f))
        else:
            raise ValueError(f"frames: expected frame names or indices below "
                             f"{model.n_frames}, got {f!r}")

    names, force, mode, events, keep = (), None, None, (), []
    if contacts is not None:
        contacts = tuple(contacts)
        names = tuple(c.name or (c.frame if isinstance(c.frame, str)
                                 else model.frame_names[c.frame]) for c in contacts)
        got = getattr(trajectory, "contact_names", None)
        if trajectory is None or got is None:
            raise ValueError("contacts: drawn from a trajectory simulated with them "
                             "(trajectory.contact_force); this motion has none")
        if tuple(got) != names:
            raise ValueError(f"contacts: named {list(names)}, but the trajectory's are "
                             f"{list(got)}; pass the contacts it was simulated with")
        force, mode = trajectory.contact_force, trajectory.contact_mode
        events = trajectory.events
        keep = [e.sample + d for e in events for d in (0, 1) if e.sample + d < T]
    idx = _samples(t, float(fps), keep)
    C = body_poses(model, C0[idx], q[idx])
    nc = len(names)
    point = np.zeros((idx.size, nc, 3))
    for c, pc in enumerate(contacts or ()):
        f = pc.frame if isinstance(pc.frame, (int, np.integer)) else model.frame_index(pc.frame)
        P = C[:, model.frame_body[f]] @ model.frame_offset[f]
        point[:, c] = P[:, :3, 3] - pc.radius * pc.plane.normal            # c − r n
    marks = []
    for e in events:
        k = int(np.searchsorted(idx, e.sample))
        c = names.index(e.contact)
        marks.append((float(e.time), e.kind, e.contact, point[min(k, idx.size - 1), c].copy()))
    return Animation(
        title=title, time=t[idx], body_pose=C, frame_body=np.asarray(model.frame_body),
        frame_offset=np.asarray(model.frame_offset), frame_names=model.frame_names,
        shown_frames=tuple(shown), visuals=visuals, contact_names=names,
        contact_point=point,
        contact_force=np.zeros((idx.size, 0, 3)) if force is None else np.asarray(force)[idx],
        contact_mode=np.zeros((idx.size, 0), np.int8) if mode is None
        else np.asarray(mode, dtype=np.int8)[idx],
        events=tuple(marks))
