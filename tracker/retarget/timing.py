"""File time and clip time: how a motion file's frames map to the reference's time axis.

*File time* is the motion file's own: file frame ``k`` (0-based, as ``tracker inspect``
numbers them) is at ``k / file_fps`` seconds. *Clip time* is the retargeted
reference's, and so that of runs, balls, gain schedules and recordings: clip frame 0
is the first file frame the retargeter keeps. Retargeting drops an added T-pose (and
the blend out of it) at the start of many CMU conversions, so::

    clip_time = (file_frame - first_file_frame) / file_fps
              = file_time - first_file_frame / file_fps

Resampling the reference (``clip.fps``) or simulating at another time step changes
neither: both axes are in seconds, and only the file's own frame rate turns file
frames into seconds. Worked example: the CMU kick ``cmu_10_01_soccer_kick.bvh``
(120 fps, an added T-pose in file frames 0-3) has clip time 0 at file frame 4, so
file frame 96 (file time 0.8 s) is clip time (96 - 4) / 120 = 0.7667 s.

:func:`tracker.retarget.clip_timing.clip_timing` gives the mapping of a clip file without
retargeting it (the same T-pose test :func:`tracker.retarget.retarget.retarget` uses); a reference records the
mapping it was made with in its quality report (``source_fps``, ``source_frames``,
``dropped_frames``), read back by :meth:`ClipTiming.from_quality`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ClipTiming:
    """The map from a motion file's frames to clip time.

    Attributes:
        file_fps: the file's frame rate, Hz (not rounded: CMU's 120.005 stays).
        file_frames: frames in the file.
        first_file_frame: the file frame that is clip frame 0 (frames before it were dropped).
    """

    file_fps: float
    file_frames: int
    first_file_frame: int = 0

    @property
    def clip_start_file_time(self) -> float:
        """File time of clip time 0, s."""
        return self.first_file_frame / self.file_fps

    @property
    def clip_duration(self) -> float:
        """Clip time of the file's last frame, s."""
        return (self.file_frames - 1 - self.first_file_frame) / self.file_fps

    def clip_time_of_frame(self, file_frame: int) -> float:
        """Clip time of a file frame, s (negative inside the dropped frames)."""
        return (file_frame - self.first_file_frame) / self.file_fps

    def clip_time_of_file_time(self, file_time: float) -> float:
        """Clip time of a file time, s."""
        return file_time - self.first_file_frame / self.file_fps

    def file_time_of_clip_time(self, clip_time: float) -> float:
        """File time of a clip time, s."""
        return clip_time + self.first_file_frame / self.file_fps

    def describe(self) -> str:
        """One phrase: ``clip time 0 = file frame 4 (file frames 0-3 dropped), 120 fps``."""
        f0 = self.first_file_frame
        dropped = ("" if f0 == 0 else " (file frame 0 dropped)" if f0 == 1
                   else f" (file frames 0-{f0 - 1} dropped)")
        return f"clip time 0 = file frame {f0}{dropped}, {self.file_fps:.8g} fps"

    def resolve(self, base: str, value: float, clip_name: str = "the clip",
                keep_first_frame_hint: str = "clip.keep_first_frame: true") -> float:
        """Clip time of a file time (``base`` ``"file"``, s) or file frame (``"file_frame"``).

        Raises:
            ValueError: one phrase, for a time inside the dropped frames or after the file's last
                frame (the caller adds which key or flag gave it).
        """
        if base == "file_frame":
            frame = float(value)
            clip_t = self.clip_time_of_frame(int(value))
            what = f"file frame {int(value)}"
        elif base == "file":
            frame = float(value) * self.file_fps
            clip_t = self.clip_time_of_file_time(float(value))
            what = f"file time {value:g} s (file frame {frame:.6g})"
        else:
            raise ValueError(f"unknown time base {base!r}")
        if frame < self.first_file_frame - 1e-6:
            hint = f", or set {keep_first_frame_hint} to keep them" if keep_first_frame_hint else ""
            raise ValueError(f"{what} is in the frames retargeting drops (the added T-pose of {clip_name}: "
                             f"{self.describe()}); give a time at or after file frame {self.first_file_frame}{hint}")
        last = self.file_frames - 1
        if frame > last + 1e-6:
            raise ValueError(f"{what} is after the last frame of {clip_name} (file frame {last}, file time "
                             f"{last / self.file_fps:.6g} s)")
        return max(clip_t, 0.0)  # at clip frame 0 within rounding

    def to_dict(self) -> dict:
        return {"file_fps": self.file_fps, "file_frames": self.file_frames, "first_file_frame": self.first_file_frame}

    @classmethod
    def from_quality(cls, quality: dict) -> ClipTiming | None:
        """The mapping a reference's quality report records (None if it predates the record)."""
        try:
            return cls(float(quality["source_fps"]), int(quality["source_frames"]),
                       int(quality.get("dropped_frames", 0)))
        except (KeyError, TypeError, ValueError):
            return None
