"""The PyBullet GUI window: widgets, keyboard, following camera, on-screen text, ghost, screenshots.

Everything here talks to PyBullet; what the inputs *do* is decided in
:mod:`tracker.viewer.controls`. Findings about PyBullet's GUI (3.2.7, checked
under Xvfb with Mesa's llvmpipe) that shape this module:

* the 3D view is rendered over the whole window and the parameter panels are
  drawn on top of it (about 250 px on either side), so on-screen text is
  placed inside the uncovered middle;
* calls that change what is drawn (``addUserDebugText``, ``changeVisualShape``,
  ``addUserDebugParameter``, ``loadURDF``...) wait for the GUI thread to draw a
  frame, 20-80 ms each; with drawing switched off around them
  (:func:`drawing_paused`) they take a few ms, and the window keeps showing its
  last frame meanwhile (checked on screen grabs), so every batch of such calls
  is wrapped in it. The status text is still re-sent only a few times a second
  and only when it changed;
* text parented to a body follows that body for free, so all text hangs from
  an invisible anchor body that is moved to the camera's eye every frame,
  which keeps it fixed on the screen while the camera moves;
* the first character of a slider or button label is cut off, so labels get a
  leading space;
* the GUI's own single-key shortcuts (wireframe, shadows...) are turned off so
  that the keys of :mod:`tracker.viewer.controls` reach the program;
* ``getCameraImage`` with ``ER_BULLET_HARDWARE_OPENGL`` renders the GUI's
  view offscreen through the window's OpenGL context (works under Xvfb);
  ``ER_TINY_RENDERER`` is the fallback;
* the GUI thread draws a frame every 4 ms by default; drawn in software
  (llvmpipe) that takes the machine's cores from the simulation, so the
  window is drawn at most every :data:`RENDER_PERIOD_US` (about 30 frames/s)
  and llvmpipe gets one thread fewer than there are cores
  (:func:`limit_software_rendering`);
* when the user closes the window, ``isConnected`` turns false and PyBullet
  calls raise ``pybullet.error``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from tracker.quiet import quiet_stdio  # imports pybullet silently first

import pybullet as p  # noqa: E402

from tracker.errors import TrackerError
from tracker.viewer.controls import Controls

#: Window size asked of PyBullet, px.
WINDOW_SIZE: tuple[int, int] = (1280, 720)
#: Shortest time between two frames the GUI thread draws, µs (PyBullet's option is named
#: ``minGraphicsUpdateTimeMs`` but counts microseconds; its default, 4000, draws up to 250 frames/s).
RENDER_PERIOD_US = 33000
#: The parameter panels cover about this much of the view on the left and right, px.
PANEL_WIDTH = 250
#: Top-left corner of the on-screen text, px from the window's corner.
TEXT_ORIGIN: tuple[int, int] = (262, 40)
#: Line spacing and size of the on-screen text.
LINE_HEIGHT_PX = 14
TEXT_SIZE = 0.9
#: Seconds between two updates of the status text (each costs a GUI frame).
STATUS_PERIOD = 0.25
#: Seconds between two readings of the buttons and sliders (a dozen GUI round trips).
INPUT_PERIOD = 0.05
#: The ghost's colour: translucent gold, a hue found nowhere in the ground or sky.
GHOST_RGBA: tuple[float, float, float, float] = (1.0, 0.72, 0.1, 0.4)
#: Ghost offset in "beside" mode: 1 m along +Y (the character's left at t = 0), m.
BESIDE_OFFSET: tuple[float, float, float] = (0.0, 1.0, 0.0)
#: Initial camera: distance m, yaw deg, pitch deg (front-left of a character facing +X).
CAMERA = (3.2, 62.0, -12.0)
#: Height of the camera's target, m, and how fast it catches up with the character, s.
CAMERA_HEIGHT = 0.9
CAMERA_LAG = 0.25


@contextmanager
def drawing_paused(client: int) -> Iterator[None]:
    """Switch the GUI's drawing off for a batch of calls that change the scene (see the module notes)."""
    p.configureDebugVisualizer(p.COV_ENABLE_RENDERING, 0, physicsClientId=client)
    try:
        yield
    finally:
        if is_connected(client):
            p.configureDebugVisualizer(p.COV_ENABLE_RENDERING, 1, physicsClientId=client)


def limit_software_rendering() -> None:
    """Leave a core to the simulation when the window is drawn in software (Mesa's llvmpipe, Xvfb).

    llvmpipe starts one render thread per core; on a 2-core machine they starve the simulation
    (measured: 0.6-1.9x real time with them, 4.3x with one). ``LP_NUM_THREADS`` only affects
    llvmpipe and is left alone when the user has set it.
    """
    os.environ.setdefault("LP_NUM_THREADS", str(max(1, (os.cpu_count() or 2) - 1)))


def require_display() -> None:
    """Raise a clear error where PyBullet's GUI would kill the process for want of an X display."""
    if sys.platform.startswith("linux") and not os.environ.get("DISPLAY"):
        raise TrackerError("no display to open the window on ($DISPLAY is not set); run it under a virtual "
                           "screen: xvfb-run -a -s '-screen 0 1280x720x24' tracker ...")


def open_window_world(dt: float = 1.0 / 60.0, solver_iterations: int = 50, size: tuple[int, int] = WINDOW_SIZE):
    """A :class:`~tracker.sim.world.World` in a GUI window of ``size`` px (checks for a display first)."""
    from tracker.sim.world import World, WorldSettings

    require_display()
    limit_software_rendering()
    return World(WorldSettings(dt=dt, solver_iterations=solver_iterations), gui=True, options=gui_options(size))


def is_connected(client: int | None) -> bool:
    """Whether ``client`` is still a live connection (False once the user closes the window)."""
    return client is not None and bool(p.isConnected(physicsClientId=client))


def gui_options(size: tuple[int, int] = WINDOW_SIZE) -> str:
    """``p.connect`` options for a GUI window of ``size`` px drawn every :data:`RENDER_PERIOD_US`."""
    return f"--width={int(size[0])} --height={int(size[1])} --minGraphicsUpdateTimeMs={RENDER_PERIOD_US}"


def make_ghost(client: int, model, rgba: Iterable[float] = GHOST_RGBA):
    """Load ``model`` a second time as a translucent reference ghost that touches nothing.

    Returns:
        the ghost's :class:`~tracker.character.character.Character` (drive it with ``reset_state``).
    """
    from tracker.character.character import Character

    with quiet_stdio():
        ghost = Character.load(client, model)
    body = ghost.body_id
    colour = list(rgba)
    for link in range(-1, p.getNumJoints(body, physicsClientId=client)):
        p.setCollisionFilterGroupMask(body, link, 0, 0, physicsClientId=client)
        p.changeVisualShape(body, link, rgbaColor=colour, physicsClientId=client)
    return ghost


def sphere_marker(client: int, radius: float, rgba: Iterable[float]) -> int:
    """A visual-only sphere (no mass, no collision shape), for replayed balls; returns its body id."""
    shape = p.createVisualShape(p.GEOM_SPHERE, radius=float(radius), rgbaColor=list(rgba), physicsClientId=client)
    return p.createMultiBody(baseMass=0.0, baseCollisionShapeIndex=-1, baseVisualShapeIndex=shape,
                             basePosition=[0.0, 0.0, -10.0], physicsClientId=client)


def _camera_matrices(cam) -> tuple[np.ndarray, np.ndarray]:
    """View (world -> camera) and projection matrices ``(4, 4)`` of ``getDebugVisualizerCamera()``."""
    view = np.array(cam[2], dtype=float).reshape(4, 4).T  # PyBullet lists them column-major
    proj = np.array(cam[3], dtype=float).reshape(4, 4).T
    return view, proj


def project(points: np.ndarray, view: np.ndarray, proj: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """Pixel coordinates ``(N, 2)`` (x right, y down) of world points ``(N, 3)``; NaN behind the camera."""
    pts = np.c_[np.asarray(points, dtype=float).reshape(-1, 3), np.ones(len(np.atleast_2d(points)))]
    clip = (proj @ view @ pts.T).T
    w = clip[:, 3:4]
    ndc = np.where(w > 1e-9, clip[:, 0:2] / np.where(w > 1e-9, w, 1.0), np.nan)
    return np.c_[(ndc[:, 0] + 1.0) * 0.5 * size[0], (1.0 - ndc[:, 1]) * 0.5 * size[1]]


class Window:
    """One PyBullet GUI client dressed as the playback window.

    Args:
        client: a PyBullet client connected in GUI mode.
        controls: the keys, buttons and sliders to offer (their effects are the controls' business).
        title_lines: fixed lines shown above the help (e.g. the clip's name).
    """

    def __init__(self, client: int, controls: Controls, title_lines: Iterable[str] = (),
                 camera: tuple[float, float, float] = CAMERA, camera_height: float = CAMERA_HEIGHT) -> None:
        self.client = c = client
        self.controls = controls
        # Initial camera (distance m, yaw deg, pitch deg) and the height it looks at, m: the defaults
        # frame a standing humanoid; a small model (the toy mouse) passes its own.
        self._camera0 = tuple(float(x) for x in camera)
        self._height = float(camera_height)
        for flag in (p.COV_ENABLE_RGB_BUFFER_PREVIEW, p.COV_ENABLE_DEPTH_BUFFER_PREVIEW,
                     p.COV_ENABLE_SEGMENTATION_MARK_PREVIEW, p.COV_ENABLE_KEYBOARD_SHORTCUTS):
            p.configureDebugVisualizer(flag, 0, physicsClientId=c)
        p.configureDebugVisualizer(p.COV_ENABLE_GUI, 1, physicsClientId=c)
        self._inputs: dict[str, int] = {}
        with drawing_paused(c):
            for b in controls.buttons:
                self._inputs[b.name] = p.addUserDebugParameter(" " + b.label, 1, 0, 0, physicsClientId=c)
            for s in controls.sliders:
                self._inputs[s.name] = p.addUserDebugParameter(" " + s.label, s.lo, s.hi, s.value,
                                                               physicsClientId=c)
            # Parented text is drawn only when its parent has a graphics instance: an invisible speck,
            # put far behind the eye (the anchor's +z), where it cannot show even while the anchor
            # lags the camera by a frame.
            speck = p.createVisualShape(p.GEOM_SPHERE, radius=1e-3, rgbaColor=[0, 0, 0, 0],
                                        visualFramePosition=[0.0, 0.0, 1000.0], physicsClientId=c)
            self._anchor = p.createMultiBody(baseMass=0.0, baseCollisionShapeIndex=-1,
                                             baseVisualShapeIndex=speck, physicsClientId=c)
        self._title = list(title_lines)
        self._help_ids: list[int] = []
        self._help_shown: bool | None = None
        self._status_ids: list[int] = []
        self._status_text: list[str] = []
        self._status_wall = -np.inf
        self._input_wall = -np.inf
        self._layout_key: tuple | None = None
        dist, yaw, pitch = self._camera0
        p.resetDebugVisualizerCamera(dist, yaw, pitch, [0.0, 0.0, self._height], physicsClientId=c)
        self._target: np.ndarray | None = None
        self._view: np.ndarray | None = None  # the view matrix last set by follow (world -> camera)
        self._wait_for_camera()

    def _camera(self):
        """``getDebugVisualizerCamera()``, or None while the GUI thread has not set it up (zero matrices)."""
        cam = p.getDebugVisualizerCamera(physicsClientId=self.client)
        view, _ = _camera_matrices(cam)
        if cam[10] <= 0 or abs(np.linalg.det(view)) < 1e-9:
            return None
        return cam

    def _wait_for_camera(self, timeout: float = 5.0) -> None:
        """The GUI thread sets its camera up (to its own default) when it first draws; wait for that,
        then put our camera in place and wait until the GUI reports it."""
        end = time.perf_counter() + timeout
        while self._camera() is None and time.perf_counter() < end:
            time.sleep(0.01)
        dist, yaw, pitch = self._camera0
        while time.perf_counter() < end:
            p.resetDebugVisualizerCamera(dist, yaw, pitch, [0.0, 0.0, self._height], physicsClientId=self.client)
            time.sleep(0.01)
            cam = self._camera()
            if cam is not None and abs(cam[8] - yaw) < 1e-3 and abs(cam[10] - dist) < 1e-3:
                break

    # -- inputs ------------------------------------------------------------------------
    def poll(self, extra_keys: Mapping[int, int] | None = None) -> None:
        """Read the keyboard (every call) and the buttons and sliders (every :data:`INPUT_PERIOD` s)
        and hand them to the controls.

        Args:
            extra_keys: key events to merge in (scripted presses), same format as PyBullet's.
        """
        c = self.client
        events = dict(p.getKeyboardEvents(physicsClientId=c))
        for key, flags in (extra_keys or {}).items():
            events[key] = events.get(key, 0) | flags
        self.controls.handle_keys(events)
        now = time.perf_counter()
        if now - self._input_wall >= INPUT_PERIOD:
            self._input_wall = now
            values = {name: p.readUserDebugParameter(i, physicsClientId=c) for name, i in self._inputs.items()}
            self.controls.apply_inputs(values)

    # -- camera --------------------------------------------------------------------------
    def follow(self, point: Iterable[float], elapsed: float) -> None:
        """Move the camera's target toward ``point`` (x, y; z kept at :data:`CAMERA_HEIGHT`).

        The user's yaw, pitch and distance (mouse) are kept. ``elapsed`` is the clip time since the
        last call, s: the target closes the gap with time constant :data:`CAMERA_LAG`.
        """
        goal = np.array([*list(point)[:2], self._height], dtype=float)
        cam = self._camera()
        c0 = self._camera0
        yaw, pitch, dist = (cam[8], cam[9], cam[10]) if cam is not None else (c0[1], c0[2], c0[0])
        if self._target is None or elapsed < 0:
            self._target = goal
        else:
            a = 1.0 - np.exp(-max(elapsed, 0.0) / CAMERA_LAG)
            self._target = self._target + a * (goal - self._target)
        p.resetDebugVisualizerCamera(dist, yaw, pitch, self._target.tolist(), physicsClientId=self.client)
        # The GUI reports a new camera only after it next draws; the text anchor uses this one now.
        self._view = np.array(p.computeViewMatrixFromYawPitchRoll(self._target.tolist(), dist, yaw, pitch, 0.0, 2),
                              dtype=float).reshape(4, 4).T

    # -- on-screen text --------------------------------------------------------------------
    def _place_anchor(self) -> tuple[np.ndarray, np.ndarray, tuple[int, int]] | None:
        """Put the text anchor at the camera's eye, axes along the camera's; returns view, proj, size
        (None while the camera is not set up)."""
        cam = self._camera()
        if cam is None:
            return None
        view, proj = _camera_matrices(cam)
        if self._view is not None:
            view = self._view
        inv = np.linalg.inv(view)
        from scipy.spatial.transform import Rotation

        quat = Rotation.from_matrix(inv[:3, :3]).as_quat()
        p.resetBasePositionAndOrientation(self._anchor, inv[:3, 3].tolist(), quat.tolist(),
                                          physicsClientId=self.client)
        return view, proj, (int(cam[0]), int(cam[1]))

    def _local(self, proj: np.ndarray, size: tuple[int, int], line: int) -> list[float]:
        """Anchor-frame position (depth 1 m in front of the eye) of text line ``line``."""
        px = TEXT_ORIGIN[0] if size[0] > 2 * PANEL_WIDTH + 200 else 12
        py = TEXT_ORIGIN[1] + line * LINE_HEIGHT_PX
        ndc_x, ndc_y = 2.0 * px / size[0] - 1.0, 1.0 - 2.0 * py / size[1]
        return [ndc_x / proj[0, 0], ndc_y / proj[1, 1], -1.0]

    def _text(self, text: str, pos: list[float], rgb, replace: int | None) -> int:
        kw = {"replaceItemUniqueId": replace} if replace is not None else {}
        return p.addUserDebugText(text, pos, textColorRGB=list(rgb), textSize=TEXT_SIZE,
                                  parentObjectUniqueId=self._anchor, parentLinkIndex=-1,
                                  physicsClientId=self.client, **kw)

    def show_text(self, status: list[str], force: bool = False) -> None:
        """Keep the help (per :attr:`PlaybackState.show_help`) and the status lines on screen.

        The status is re-sent at most every :data:`STATUS_PERIOD` s of wall time (``force``: now),
        and only the lines that changed.
        """
        placed = self._place_anchor()
        if placed is None:
            return
        _, proj, size = placed
        key = (size, round(float(proj[0, 0]), 6), round(float(proj[1, 1]), 6))
        relayout = key != self._layout_key  # first call, or the window was resized
        show = self.controls.state.show_help
        now = time.perf_counter()
        due = force or now - self._status_wall >= STATUS_PERIOD
        if not (relayout or show != self._help_shown or (due and status != self._status_text)):
            return
        with drawing_paused(self.client):
            if relayout:
                self._clear_text()
                self._layout_key = key
            if show != self._help_shown:
                for i in self._help_ids:
                    p.removeUserDebugItem(i, physicsClientId=self.client)
                lines = self._title + (["keys:"] + self.controls.help_lines() if show else ["h  show the keys"])
                self._help_ids = [self._text(t, self._local(proj, size, k), (0.05, 0.05, 0.25), None)
                                  for k, t in enumerate(lines)]
                self._help_shown = show
                self._status_text = []  # the status moves with the help's length
            self._status_wall = now
            first = len(self._help_ids) + 1
            for k, text in enumerate(status):
                if k < len(self._status_text) and text == self._status_text[k]:
                    continue
                pos = self._local(proj, size, first + k)
                if k < len(self._status_ids):
                    self._status_ids[k] = self._text(text, pos, (0.45, 0.0, 0.0), self._status_ids[k])
                else:
                    self._status_ids.append(self._text(text, pos, (0.45, 0.0, 0.0), None))
            for i in self._status_ids[len(status):]:
                p.removeUserDebugItem(i, physicsClientId=self.client)
            self._status_ids = self._status_ids[:len(status)]
            self._status_text = list(status)

    def _clear_text(self) -> None:
        for i in self._help_ids + self._status_ids:
            p.removeUserDebugItem(i, physicsClientId=self.client)
        self._help_ids, self._status_ids, self._status_text = [], [], []
        self._help_shown = None

    # -- screenshots -------------------------------------------------------------------------
    def screenshot(self, path: str | Path, bodies: Mapping[str, int | Iterable[int] | np.ndarray] = (),
                   grab_screen: bool = False) -> dict:
        """Save the window's 3D view (or the whole X screen) as PNG, and a JSON description beside it.

        The view is rendered with the GUI's own camera matrices by PyBullet's OpenGL renderer
        (TinyRenderer if that fails); it shows the scene without the panels and text. With
        ``grab_screen`` the X screen is captured instead (needs Pillow with XCB and $DISPLAY); under
        ``xvfb-run`` that is exactly the window, panels and text included.

        Args:
            path: the PNG to write.
            bodies: name -> body id(s) whose pixel bounding boxes go into the JSON (their links'
                AABBs), or an array of world points ``(N, 3)`` to box (bodies without collision shapes).
            grab_screen: capture the X screen instead of rendering the view.

        Returns:
            the description written to ``path`` with suffix ``.json``: image size, renderer,
            camera matrices and ``boxes`` (name -> ``[x0, y0, x1, y1]`` px, clipped to the image,
            or None when off-screen).
        """
        from PIL import Image

        c = self.client
        cam = p.getDebugVisualizerCamera(physicsClientId=c)
        size = (int(cam[0]), int(cam[1]))
        view, proj = _camera_matrices(cam)
        if grab_screen:
            image, renderer = _grab_screen(), "x11-screen"
        else:
            image, renderer = self._render(cam, size)
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp.png")
        Image.fromarray(image).save(tmp)
        tmp.replace(path)
        boxes = {name: self._box(ids, view, proj, size) for name, ids in dict(bodies).items()}
        info = {"image": path.name, "width": int(image.shape[1]), "height": int(image.shape[0]),
                "renderer": renderer, "view": view.tolist(), "projection": proj.tolist(), "boxes": boxes}
        path.with_suffix(".json").write_text(json.dumps(info, indent=1) + "\n")
        return info

    def _render(self, cam, size: tuple[int, int]) -> tuple[np.ndarray, str]:
        c = self.client
        for renderer, name in ((p.ER_BULLET_HARDWARE_OPENGL, "opengl"), (p.ER_TINY_RENDERER, "tiny")):
            try:
                w, h, rgba = p.getCameraImage(size[0], size[1], cam[2], cam[3], renderer=renderer,
                                              physicsClientId=c)[:3]
            except p.error:
                continue
            img = np.asarray(rgba, dtype=np.uint8).reshape(h, w, 4)[:, :, :3]
            if img.any():
                return np.ascontiguousarray(img), name
        raise TrackerError("cannot render the window's view (neither OpenGL nor TinyRenderer gave an image)")

    def _box(self, ids, view, proj, size) -> list[int] | None:
        if isinstance(ids, np.ndarray):  # world points to enclose
            return self._points_box(ids.reshape(-1, 3), view, proj, size)
        ids = [ids] if isinstance(ids, (int, np.integer)) else list(ids)
        corners = []
        for body in ids:
            for link in range(-1, p.getNumJoints(body, physicsClientId=self.client)):
                lo, hi = p.getAABB(body, link, physicsClientId=self.client)
                lo, hi = np.array(lo), np.array(hi)
                if not (np.isfinite(lo).all() and np.isfinite(hi).all()) or (hi < lo).any():
                    continue
                corners += [[(lo, hi)[i][0], (lo, hi)[j][1], (lo, hi)[k][2]]
                            for i in (0, 1) for j in (0, 1) for k in (0, 1)]
        if not corners:
            return None
        return self._points_box(np.array(corners), view, proj, size)

    @staticmethod
    def _points_box(points: np.ndarray, view, proj, size) -> list[int] | None:
        px = project(points, view, proj, size)
        if np.isnan(px).any():
            return None
        x0, y0 = np.clip(px.min(axis=0), 0, [size[0], size[1]])
        x1, y1 = np.clip(px.max(axis=0), 0, [size[0], size[1]])
        if x1 - x0 < 1 or y1 - y0 < 1:
            return None
        return [int(np.floor(x0)), int(np.floor(y0)), int(np.ceil(x1)), int(np.ceil(y1))]


def _grab_screen() -> np.ndarray:
    """The X screen as ``(H, W, 3)`` uint8."""
    from PIL import ImageGrab

    display = os.environ.get("DISPLAY")
    if not display:
        raise TrackerError("--grab-screen needs an X display ($DISPLAY is not set)")
    try:
        image = ImageGrab.grab(xdisplay=display)
    except OSError as exc:
        raise TrackerError(f"cannot capture the X screen {display} ({exc})") from None
    return np.asarray(image.convert("RGB"))
