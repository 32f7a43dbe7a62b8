"""PyBullet clients and random states for the character tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pybullet as p
import pytest
from scipy.spatial.transform import Rotation

from tracker.character.character import Character

REPO = Path(__file__).resolve().parents[2]
GRAVITY = -9.81

# The joint and link names other modules are written against (issue 3).
HUMANOID_JOINTS = (
    ("spine_lower", "spherical"), ("spine_upper", "spherical"), ("neck", "spherical"),
    ("left_hip", "spherical"), ("left_knee", "revolute"), ("left_ankle", "spherical"),
    ("right_hip", "spherical"), ("right_knee", "revolute"), ("right_ankle", "spherical"),
    ("left_shoulder", "spherical"), ("left_elbow", "revolute"), ("left_wrist", "spherical"),
    ("right_shoulder", "spherical"), ("right_elbow", "revolute"), ("right_wrist", "spherical"),
)
HUMANOID_LINKS = (
    "pelvis", "abdomen", "chest", "head",
    "left_thigh", "left_shin", "left_foot", "right_thigh", "right_shin", "right_foot",
    "left_upper_arm", "left_forearm", "left_hand", "right_upper_arm", "right_forearm", "right_hand",
)


@pytest.fixture()
def client():
    """A fresh headless client with gravity and no ground; closed after the test."""
    cid = p.connect(p.DIRECT)
    p.setGravity(0.0, 0.0, GRAVITY, physicsClientId=cid)
    yield cid
    p.disconnect(cid)


def add_ground(cid: int) -> int:
    """A static plane through z = 0."""
    shape = p.createCollisionShape(p.GEOM_PLANE, physicsClientId=cid)
    return p.createMultiBody(0.0, shape, physicsClientId=cid)


def random_state(char: Character, rng: np.random.Generator, base_height: float = 2.0,
                 spread: float = 0.6, fixed: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """A random ``(q, v)``: tilted base in the air, joints within their limits, velocities ~ N(0, 1)."""
    lay = char.layout
    lo, hi = char.joint_limit_vectors()
    q = lay.neutral_q()
    q[0:3] = rng.uniform(-0.5, 0.5, 3) + [0.0, 0.0, base_height]
    if not fixed:
        q[3:7] = Rotation.random(random_state=int(rng.integers(1 << 30))).as_quat()
    for s in lay.joints:
        if s.kind == "spherical":
            q[s.q] = Rotation.from_rotvec(rng.normal(size=3) * spread).as_quat()
        else:
            a, b = max(lo[s.v][0], -2.0), min(hi[s.v][0], 2.0)
            q[s.q] = rng.uniform(a + 0.2, b - 0.2)
    v = rng.normal(size=lay.nv)
    if fixed:
        q[0:3] = char.get_state()[0][0:3]
        v[0:6] = 0.0
    return q, v


def same_rotations(q1: np.ndarray, q2: np.ndarray) -> float:
    """Largest angle between corresponding quaternions ``(..., 4)``, rad."""
    r = Rotation.from_quat(np.reshape(q1, (-1, 4))).inv() * Rotation.from_quat(np.reshape(q2, (-1, 4)))
    return float(np.max(r.magnitude()))
