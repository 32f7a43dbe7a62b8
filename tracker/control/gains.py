"""Servo gains keyed by joint name (pure numpy).

Gains (:func:`build_gains`). Per joint from the model file's groups, or from
one per-kg gain ``k`` scaled by the mass the joint supports, as Tan, Liu & Turk
(2011, §4.1 and Table 3) and Zordan & Hodgins (2002) do:

    kp_j = k · m_sup(j)            m_sup(j): the joint's child link plus everything outboard, kg
    kd_j = kd_ratio · kp_j · dt    (Table 3: "kd = kp·Δt", i.e. kd_ratio = 1)  or an absolute kd

A global ``gain_scale`` multiplies every joint's ``kp`` and ``kd``. The six
root DOFs get their own large gains (``root_kp`` = linear N/m, angular
N·m/rad; ``kd = root_kd_ratio · kp · dt``), as the simulation's ``SimOptions``.

The Zordan–Hodgins schedule that lowers them on impacts is :mod:`tracker.control.schedule`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import numpy as np

from tracker.character.kinematics import Kinematics
from tracker.character.layout import Layout
from tracker.character.model import Model
from tracker.control.base import Gains
from tracker.errors import ConfigError

KdMode = Literal["auto", "ratio", "absolute"]
KD_MODES: tuple[str, ...] = ("auto", "ratio", "absolute")
RootMode = Literal["anchored", "kinematic", "free"]
ROOT_MODES: tuple[str, ...] = ("anchored", "kinematic", "free")
Scaling = Literal["mass", "uniform", "model"]
SCALINGS: tuple[str, ...] = ("mass", "uniform", "model")


def _choice(value: str, valid: tuple[str, ...], what: str) -> str:
    if value not in valid:
        raise ConfigError(f"{what} {value!r} is not one of: {', '.join(valid)}")
    return value


def _number(value: Any, what: str, minimum: float = 0.0, strict: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise ConfigError(f"{what} must be a number, got {value!r}")
    x = float(value)
    if not math.isfinite(x) or x < minimum or (strict and x == minimum):
        raise ConfigError(f"{what} must be a finite number {'>' if strict else '>='} {minimum}, got {value!r}")
    return x


# -- supported masses ------------------------------------------------------------

def supported_masses(kinematics: Kinematics) -> dict[str, float]:
    """Mass each joint carries: its child link and every link outboard of it, kg.

    Args:
        kinematics: the model's URDF tree (:meth:`Model.kinematics`); fixed joints count as links of the tree.

    Returns:
        joint name -> kg, for every joint of the URDF (fixed ones included).
    """
    subtree = dict(kinematics.masses)
    for j in reversed(kinematics.joints):  # topological order: children after parents
        subtree[j.parent] += subtree[j.child]
    return {j.name: float(subtree[j.child]) for j in kinematics.joints}


# -- per-joint tables --------------------------------------------------------------

@dataclass(frozen=True)
class _Table:
    """Per-DOF model quantities of the actuated joints, ``(n,)`` over the joint DOFs (``v`` minus the base)."""

    layout: Layout
    names: tuple[str, ...]  # actuated joints, layout order
    offset: int  # first joint DOF in v (6 with a base)
    dof_joint: np.ndarray  # (n,) index into names
    m_sup: np.ndarray  # (n,) kg
    kp: np.ndarray  # (n,) model group kp
    kd: np.ndarray  # (n,) model group kd
    tau_max: np.ndarray  # (n,) model torque limits
    groups: Mapping[str, tuple[str, ...]]

    @classmethod
    def of(cls, model: Model, kinematics: Kinematics | None = None) -> _Table:
        lay = model.layout
        masses = supported_masses(kinematics or model.kinematics())
        offset = 6 if lay.has_base else 0
        n = lay.nv - offset
        idx, m, kp, kd, lim = (np.zeros(n, int), np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n))
        for k, s in enumerate(lay.joints):
            sl = slice(s.v.start - offset, s.v.stop - offset)
            g = model.group_of(s.name)
            idx[sl], m[sl], kp[sl], kd[sl], lim[sl] = k, masses[s.name], g.kp, g.kd, g.torque_limit
        groups = {g.name: g.joints for g in model.groups}
        return cls(lay, lay.names, offset, idx, m, kp, kd, lim, groups)

    def per_dof(self, per_joint: np.ndarray) -> np.ndarray:
        """A ``(J,)`` per-joint vector expanded to ``(n,)`` joint DOFs."""
        return per_joint[self.dof_joint]

    def resolve(self, value: float | Mapping[str, float], what: str, default: np.ndarray) -> np.ndarray:
        """A scalar, or a mapping keyed by joint name, group name or regex, as ``(n,)`` per DOF.

        Precedence: joint name > group name > pattern; joints no key matches keep ``default``.
        """
        if not isinstance(value, Mapping):
            return np.full(len(self.dof_joint), _number(value, what))
        per_joint = np.full(len(self.names), np.nan)
        rank = np.full(len(self.names), -1)
        for key, val in value.items():
            x = _number(val, f"{what}.{key}")
            if key in self.names:
                hits, r = [key], 2
            elif key in self.groups:
                hits, r = list(self.groups[key]), 1
            else:
                try:
                    rx = re.compile(str(key))
                except re.error:
                    rx = None
                hits, r = ([j for j in self.names if rx.fullmatch(j)] if rx else []), 0
                if not hits:
                    valid = self.names + tuple(self.groups)
                    raise ConfigError(f"{what}: {key!r} names no joint or group and matches no joint "
                                      f"(joints and groups: {', '.join(valid)})")
            for j in hits:
                i = self.names.index(j)
                if r >= rank[i]:
                    per_joint[i], rank[i] = x, r
        out = self.per_dof(per_joint)
        return np.where(np.isnan(out), default, out)

    def root_rows(self, dt: float, root: str, root_kp: Sequence[float], root_kd_ratio: float
                  ) -> tuple[np.ndarray, np.ndarray]:
        """``(kp (6,), kd (6,))`` of the base DOFs."""
        _choice(root, ROOT_MODES, "root")
        if len(root_kp) != 2:
            raise ConfigError(f"root_kp must be (linear N/m, angular N·m/rad), got {root_kp!r}")
        lin, ang = (_number(x, "root_kp") for x in root_kp)
        ratio = _number(root_kd_ratio, "root_kd_ratio")
        kp = np.array([lin] * 3 + [ang] * 3)
        if root == "free":
            kp[:] = 0.0
        return kp, ratio * kp * dt


def build_gains(
    model: Model,
    dt: float,
    *,
    k: float | None = None,
    inertia_scaled: bool = True,
    kd_mode: KdMode = "auto",
    kd_ratio: float = 1.0,
    kd: float | Mapping[str, float] | None = None,
    gain_scale: float = 1.0,
    root_kp: tuple[float, float] = (2.0e5, 2.0e5),
    root_kd_ratio: float = 1.0,
    root: RootMode = "anchored",
    torque_limits: bool = True,
    kinematics: Kinematics | None = None,
) -> Gains:
    """Servo gains ``(nv,)`` of a model, built by joint name.

    Args:
        model: the character model (its groups give kp, kd and torque limits).
        dt: physics time step, s (> 0).
        k: ``None``: the model's group ``kp``. A number: per-kg gain, ``kp = k · m_sup``
            (N·m/rad/kg) when ``inertia_scaled``, else the same ``kp = k`` (N·m/rad) on every joint.
        inertia_scaled: scale ``k`` by each joint's supported mass (:func:`supported_masses`).
        kd_mode: ``ratio``: ``kd = kd_ratio · kp · dt``; ``absolute``: ``kd`` given in N·m·s/rad
            (argument ``kd``, default the model's group ``kd``); ``auto``: absolute when ``k`` is
            ``None`` (the model file's kp and kd as written), ratio otherwise.
        kd_ratio: multiple of ``kp·dt`` in ratio mode (SPD is stable for >= 1; Tan uses 1).
        kd: absolute kd, N·m·s/rad: one number, or a mapping keyed by joint name, group name or
            regex (unmatched joints keep the model's kd).
        gain_scale: multiplies every joint's kp and kd (not the root's).
        root_kp: root stiffness (linear N/m, angular N·m/rad); kd = ``root_kd_ratio · kp · dt``.
        root_kd_ratio: root kd as a multiple of ``kp·dt``.
        root: ``anchored`` or ``kinematic`` (root servoed with ``root_kp``), ``free`` (no root gains).
        torque_limits: clip joint torques to the model's limits (``False``: unlimited). The root is
            never limited.
        kinematics: the model's kinematics, if already built (saves parsing the URDF again).

    Returns:
        :class:`Gains` in the layout's ``v`` order.

    Raises:
        ConfigError: an invalid option.
    """
    tab = _Table.of(model, kinematics)
    kp_j, kd_j = _joint_gains(tab, dt, k, inertia_scaled, kd_mode, kd_ratio, kd, gain_scale)
    return _assemble(tab, dt, kp_j, kd_j, root_kp, root_kd_ratio, root, torque_limits)


def _joint_gains(tab: _Table, dt: float, k, inertia_scaled: bool, kd_mode: str, kd_ratio: float, kd,
                 gain_scale: float) -> tuple[np.ndarray, np.ndarray]:
    dt = _number(dt, "dt", strict=True)
    mode = _choice(kd_mode, KD_MODES, "kd_mode")
    scale = _number(gain_scale, "gain_scale")
    if k is None:
        kp = tab.kp.copy()
    else:
        kp = _number(k, "k") * (tab.m_sup if inertia_scaled else np.ones_like(tab.m_sup))
    if mode == "auto":
        mode = "absolute" if k is None else "ratio"
    if mode == "ratio":
        kdv = _number(kd_ratio, "kd_ratio") * kp * dt
    else:
        kdv = tab.kd.copy() if kd is None else tab.resolve(kd, "kd", tab.kd)
    return kp * scale, kdv * scale


def _assemble(tab: _Table, dt: float, kp_j: np.ndarray, kd_j: np.ndarray, root_kp, root_kd_ratio, root: str,
              torque_limits: bool, base: Gains | None = None) -> Gains:
    nv, o = tab.layout.nv, tab.offset
    kp, kd, lim = np.zeros(nv), np.zeros(nv), np.full(nv, np.inf)
    kp[o:], kd[o:] = kp_j, kd_j
    if torque_limits:
        lim[o:] = tab.tau_max
    if o:
        if base is not None:
            kp[:o], kd[:o], lim[:o] = base.kp[:o], base.kd[:o], base.tau_max[:o]
        else:
            kp[:o], kd[:o] = tab.root_rows(dt, root, root_kp, root_kd_ratio)
    return Gains(kp, kd, lim)


class JointGains(NamedTuple):
    """One joint's gains for display: kp N·m/rad, kd N·m·s/rad, tau_max N·m (largest over its DOFs)."""

    kp: float
    kd: float
    tau_max: float


def joint_gains(gains: Gains, layout: Layout) -> dict[str, JointGains]:
    """Per-joint view of ``gains`` (layout order), plus ``root_linear``/``root_angular`` with a base."""
    out: dict[str, JointGains] = {}
    rows = [("root_linear", slice(0, 3)), ("root_angular", slice(3, 6))] if layout.has_base else []
    rows += [(s.name, s.v) for s in layout.joints]
    for name, sl in rows:
        out[name] = JointGains(float(gains.kp[sl].max()), float(gains.kd[sl].max()), float(gains.tau_max[sl].max()))
    return out
