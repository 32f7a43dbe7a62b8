"""Offscreen pictures of a recording: PyBullet's TinyRenderer in a DIRECT client (no display needed).

A :class:`ReplayRenderer` holds a private world with two copies of the
character — the simulated one and a tinted *ghost* showing the reference,
placed beside it — and one visual-only sphere per ball. Each :meth:`frame`
poses them from recorded ``q`` and ball positions and returns an RGB image.
Nothing is simulated; no physics step is taken.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tracker.quiet import quiet_stdio

with quiet_stdio():
    import pybullet as p
    import pybullet_data

SIM_COLOUR = (0.93, 0.45, 0.15, 1.0)  # orange: the simulated character
GHOST_COLOUR = (0.3, 0.8, 0.4, 1.0)  # green: the reference
BALL_COLOUR = (0.95, 0.95, 0.2, 1.0)


@dataclass(frozen=True)
class Camera:
    """A camera that follows the characters.

    Attributes:
        distance: from the look-at point, m.
        yaw: degrees about +Z; 0 looks from +X (the character's front) back at it, 35 from its front left
            (balls arriving from the front are seen in flight, not head-on).
        pitch: degrees; negative looks down.
        fov: vertical field of view, degrees.
        height: look-at height above the ground, m.
    """

    distance: float = 3.6
    yaw: float = 35.0
    pitch: float = -12.0
    fov: float = 45.0
    height: float = 0.9


class ReplayRenderer:
    """Renders simulated and reference poses side by side.

    Args:
        model: character model (name, YAML path or :class:`~tracker.character.model.Model`).
        size: ``(width, height)`` pixels.
        ghost_offset: where the reference stands relative to the simulated character, m
            (world frame; default 1.2 m to its left, +Y, which shows on the right of the picture).
        ball_radii: one radius per ball, m.
        camera: :class:`Camera`.
    """

    def __init__(self, model, size: tuple[int, int] = (640, 360), ghost_offset=(0.0, 1.2, 0.0),
                 ball_radii: tuple[float, ...] = (), camera: Camera | None = None) -> None:
        from tracker.character.character import Character

        self.size = (int(size[0]), int(size[1]))
        self.ghost_offset = np.asarray(ghost_offset, float)
        self.camera = camera or Camera()
        with quiet_stdio():
            self.client = p.connect(p.DIRECT)
        c = self.client
        try:
            p.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=c)
            p.loadURDF("plane.urdf", physicsClientId=c)
            with quiet_stdio():
                self.sim_char = Character.load(c, model)
                self.ghost = Character.load(c, model)
            for ch, rgba in ((self.sim_char, SIM_COLOUR), (self.ghost, GHOST_COLOUR)):
                for link in range(-1, p.getNumJoints(ch.body_id, physicsClientId=c)):
                    p.changeVisualShape(ch.body_id, link, rgbaColor=list(rgba), physicsClientId=c)
                    p.setCollisionFilterGroupMask(ch.body_id, link, 0, 0, physicsClientId=c)
            self.balls = []
            for r in ball_radii:
                vis = p.createVisualShape(p.GEOM_SPHERE, radius=float(r), rgbaColor=list(BALL_COLOUR),
                                          physicsClientId=c)
                self.balls.append(p.createMultiBody(0.0, -1, vis, [0.0, 0.0, -10.0], physicsClientId=c))
        except BaseException:
            p.disconnect(c)
            raise

    def frame(self, q_sim: np.ndarray, q_ref: np.ndarray, balls: np.ndarray | None = None) -> np.ndarray:
        """One picture ``(height, width, 3)`` uint8 of the two poses ``(nq,)`` and the balls ``(B, 3)`` m."""
        c = self.client
        q_ref = np.array(q_ref, float)
        q_ref[0:3] += self.ghost_offset
        self.sim_char.reset_state(q_sim)
        self.ghost.reset_state(q_ref)
        for k, body in enumerate(self.balls):
            pos = balls[k] if balls is not None and k < len(balls) and np.isfinite(balls[k]).all() else (0, 0, -10)
            p.resetBasePositionAndOrientation(body, list(map(float, pos)), [0, 0, 0, 1], physicsClientId=c)
        cam = self.camera
        mid = (np.asarray(q_sim[0:3], float) + q_ref[0:3]) / 2
        target = [float(mid[0]), float(mid[1]), cam.height]
        w, h = self.size
        view = p.computeViewMatrixFromYawPitchRoll(target, cam.distance, cam.yaw + 90.0, cam.pitch, 0.0, 2,
                                                   physicsClientId=c)
        proj = p.computeProjectionMatrixFOV(cam.fov, w / h, 0.05, 30.0, physicsClientId=c)
        img = p.getCameraImage(w, h, view, proj, renderer=p.ER_TINY_RENDERER, lightDirection=[2.0, 1.0, 3.0],
                               shadow=0, physicsClientId=c)
        return np.reshape(np.asarray(img[2], dtype=np.uint8), (h, w, 4))[:, :, :3].copy()

    def close(self) -> None:
        if self.client is not None and p.isConnected(self.client):
            p.disconnect(self.client)
        self.client = None

    def __enter__(self) -> ReplayRenderer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
