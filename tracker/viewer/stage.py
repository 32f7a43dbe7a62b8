"""The window's scene: the character and its reference ghost posed from ``q`` and ``q_ref``, and balls.

Nothing on the stage is simulated. The GUI client only shows poses computed
elsewhere: by a live simulation in its own headless (DIRECT) client, or by a
recording. Every PyBullet call into a GUI client is a round trip to the GUI
thread, and under CPU load each one costs a scheduler hand-over; simulating in
the GUI client made every physics step pay a dozen of them (measured: from
10x down to 0.4x real time on this 2-core machine when other processes ran),
while posing the stage costs about ten calls per drawn frame whatever the
number of steps. The simulation also stays exactly the one ``tracker run``
computes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from tracker.quiet import quiet_stdio  # imports pybullet silently first

import pybullet as p  # noqa: E402

from tracker.errors import TrackerError  # noqa: E402
from tracker.viewer.controls import Controls  # noqa: E402
from tracker.viewer.window import (BESIDE_OFFSET, Window, drawing_paused, make_ghost,  # noqa: E402
                                   open_window_world, sphere_marker)

#: Where hidden things go (under the ground), m.
HIDDEN = (0.0, 0.0, -50.0)
#: The corners of a unit cube: a ball's pixel box is its bounding cube's.
_CUBE = np.array([[i, j, k] for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)], dtype=float)


@dataclass(frozen=True)
class BallView:
    """One ball to show.

    Attributes:
        key: identifies the ball across frames (a new key makes a new marker).
        position: centre, m ``(3,)``; NaN: not in the world (hidden).
        orientation: quaternion xyzw ``(4,)``.
        radius: m.
        rgba: colour.
    """

    key: object
    position: np.ndarray
    orientation: np.ndarray
    radius: float
    rgba: tuple[float, float, float, float]


def framing(model) -> dict:
    """``camera``, ``camera_height`` and ``ghost_offset`` for :class:`Stage`, scaled to a model far from
    human size (the defaults frame a 1.75 m humanoid; the toy mouse is 25 cm long); empty otherwise.

    Args:
        model: a :class:`~tracker.character.model.Model`.
    """
    from tracker.viewer.window import CAMERA, CAMERA_HEIGHT

    pts = np.array(list(model.kinematics().zero_pose_positions().values()))
    extent = float(np.ptp(pts, axis=0).max())
    scale = extent / 1.6
    if 0.5 < scale < 2.0:
        return {}
    return {"camera": (CAMERA[0] * scale * 1.2, CAMERA[1], -35.0),
            "camera_height": CAMERA_HEIGHT * scale * 0.2,
            "ghost_offset": tuple(float(x) * max(extent * 1.5, 0.1) for x in BESIDE_OFFSET)}


class Stage:
    """A GUI window showing a character, its translucent reference ghost and balls.

    Args:
        model: the character model (name, YAML path or :class:`~tracker.character.model.Model`).
        controls: the window's keys, buttons and sliders.
        title: first line of the on-screen text.
        dt: time step shown by the GUI's physics settings (nothing is stepped), s.
        world: the GUI world to use (:func:`~tracker.viewer.window.open_window_world`); default a new
            one. PyBullet only reports the GUI's camera to client 0, so open it before any headless
            client (the simulation's) when both are needed.
        shadows: draw shadows. Off by default: drawn in software (Xvfb, no GPU) they halve the frame
            rate (measured 10 vs 22 frames/s on this 2-core machine).

    Attributes:
        world: the GUI client's :class:`~tracker.sim.world.World` (ground plane included).
        window: the :class:`~tracker.viewer.window.Window` (widgets, text, camera, screenshots).
        character, ghost: the two posed bodies (:class:`~tracker.character.character.Character`).
    """

    def __init__(self, model, controls: Controls, title: str = "", dt: float = 1.0 / 60.0, world=None,
                 shadows: bool = False, camera: tuple[float, float, float] | None = None,
                 camera_height: float | None = None,
                 ghost_offset: tuple[float, float, float] = BESIDE_OFFSET) -> None:
        from tracker.character.character import Character

        self.world = world if world is not None else open_window_world(dt)
        c = self.client = self.world.client
        try:
            if c != 0:
                raise TrackerError(f"the GUI window is PyBullet client {c}, but PyBullet reports the GUI's camera "
                                   "only to client 0: open the window before any headless client")
            p.configureDebugVisualizer(p.COV_ENABLE_SHADOWS, int(shadows), physicsClientId=c)
            with drawing_paused(c):
                with quiet_stdio():
                    self.character = Character.load(c, model)
                self.ghost = make_ghost(c, model)
            view = {k: v for k, v in (("camera", camera), ("camera_height", camera_height)) if v is not None}
            self.window = Window(c, controls, [title] if title else [], **view)
        except BaseException:
            self.world.close()
            raise
        self.controls = controls
        self.ghost_offset = np.asarray(ghost_offset, dtype=float)  # where the ghost stands "beside", m
        self._markers: dict[object, tuple[int, float]] = {}  # key -> (body, radius)
        self._shown: dict[object, BallView] = {}

    @property
    def ghost_mode(self) -> str:
        return self.controls.state.ghost

    def pose(self, q: np.ndarray, q_ref: np.ndarray) -> None:
        """Pose the character at ``q`` and the ghost at ``q_ref`` (offset, overlaid or hidden) ``(nq,)``."""
        self.character.reset_state(q)
        g = np.array(q_ref, dtype=float)
        if self.ghost_mode == "beside":
            g[0:3] += self.ghost_offset
        elif self.ghost_mode == "off":
            g[0:3] = HIDDEN  # out of sight under the ground; cheaper than re-colouring every link
        self.ghost.reset_state(g)

    def show_balls(self, balls: Iterable[BallView]) -> None:
        """Show these balls (markers created, moved, or removed for keys no longer given)."""
        c = self.client
        balls = list(balls)
        keys = {b.key for b in balls}
        gone = [k for k in self._markers if k not in keys]
        new = [b for b in balls if b.key not in self._markers]
        if gone or new:
            with drawing_paused(c):
                for k in gone:
                    p.removeBody(self._markers.pop(k)[0], physicsClientId=c)
                    self._shown.pop(k, None)
                for b in new:
                    self._markers[b.key] = (sphere_marker(c, b.radius, b.rgba), b.radius)
        for b in balls:
            body = self._markers[b.key][0]
            pos = b.position if np.isfinite(b.position).all() else np.asarray(HIDDEN)
            p.resetBasePositionAndOrientation(body, np.asarray(pos, float).tolist(),
                                              np.asarray(b.orientation, float).tolist(), physicsClientId=c)
            self._shown[b.key] = b

    def show_balance(self, com_xy: np.ndarray, polygon: np.ndarray, z: float = 0.002) -> None:
        """Draw the support polygon ``(K, 2)`` (green) and the CoM's ground point ``(2,)`` (magenta cross) on
        the ground, m. Redrawn only when either moved by 5 mm (a batch of debug lines costs the GUI a frame)."""
        com_xy, polygon = np.asarray(com_xy, float), np.asarray(polygon, float)
        last = getattr(self, "_balance_drawn", None)
        if last is not None and last[1].shape == polygon.shape and np.abs(last[0] - com_xy).max() < 5e-3 \
                and (polygon.size == 0 or np.abs(last[1] - polygon).max() < 2e-3):
            return
        c = self.client
        ids = getattr(self, "_balance_lines", [])
        segs = []
        for i in range(len(polygon)) if len(polygon) > 1 else ():
            a, b = polygon[i], polygon[(i + 1) % len(polygon)]
            segs.append(((a[0], a[1], z), (b[0], b[1], z), (0.1, 0.8, 0.2)))
        r = 0.05
        if np.isfinite(com_xy).all():
            x, y = com_xy
            segs += [((x - r, y, z), (x + r, y, z), (1.0, 0.0, 1.0)), ((x, y - r, z), (x, y + r, z), (1.0, 0.0, 1.0))]
        out = []
        with drawing_paused(c):  # one GUI frame for the batch, not one per line
            for k, (a, b, rgb) in enumerate(segs):
                kw = {"replaceItemUniqueId": ids[k]} if k < len(ids) else {}
                out.append(p.addUserDebugLine(a, b, rgb, lineWidth=3, physicsClientId=c, **kw))
            for extra in ids[len(segs):]:
                p.removeUserDebugItem(extra, physicsClientId=c)
        self._balance_lines = out
        self._balance_drawn = (com_xy.copy(), polygon.copy())

    def focus(self, q: np.ndarray) -> np.ndarray:
        """The point the camera follows: the character's root, or midway to the ghost beside it."""
        pos = np.array(q[0:3], dtype=float)
        if self.ghost_mode == "beside":
            pos = pos + 0.5 * self.ghost_offset
        return pos

    def bodies(self) -> dict[str, object]:
        """Screenshot boxes: ``character`` and ``ghost`` body ids, ``ball<k>`` bounding-cube corners."""
        out: dict[str, object] = {"character": self.character.body_id}
        if self.ghost_mode != "off":
            out["ghost"] = self.ghost.body_id
        k = 0
        for b in self._shown.values():
            if np.isfinite(b.position).all():
                k += 1
                out[f"ball{k}"] = np.asarray(b.position, float) + b.radius * _CUBE
        return out

    def frame(self, q: np.ndarray, q_ref: np.ndarray, balls: Sequence[BallView], elapsed: float,
              status: list[str]) -> None:
        """Draw one frame: poses, balls, camera (``elapsed`` clip seconds since the last frame), text."""
        self.pose(q, q_ref)
        self.show_balls(balls)
        self.window.follow(self.focus(q), elapsed)
        self.window.show_text(status)

    def screenshot(self, path, status: list[str], grab_screen: bool = False) -> Mapping:
        """Save the window's image (see :meth:`Window.screenshot`) with the status text up to date."""
        import time

        self.window.show_text(status, force=True)
        if grab_screen:
            time.sleep(0.3)  # let the GUI thread draw the last text
        return self.window.screenshot(path, self.bodies(), grab_screen=grab_screen)

    def close(self) -> None:
        self.world.close()
