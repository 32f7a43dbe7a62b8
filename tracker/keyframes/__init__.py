"""Keyframes as a source (Tan, Liu & Turk 2011 §4.2): a strict YAML file -> a track the loop samples.

* :mod:`tracker.keyframes.file`: the file format and its loader (:func:`load_keyframes`).
* :mod:`tracker.keyframes.profile`: the gain profiles that cross-fade the two servos.
* :mod:`tracker.keyframes.track`: :class:`KeyframeTrack`, the keys on a model's layout.
* :mod:`tracker.keyframes.run`: the loop set up for a keyframe file, and its measurements.
"""

from tracker.keyframes.file import KeyframeError, KeyframeFile, load_keyframes
from tracker.keyframes.profile import GainProfile

__all__ = ["GainProfile", "KeyframeError", "KeyframeFile", "load_keyframes"]
