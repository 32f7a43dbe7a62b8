"""tracker: physics-based motion-capture tracking with stable-PD servos.

Conventions, stated once and used everywhere in the package:

* **Units** are SI: metres, kilograms, seconds, radians, newtons, N*m.
  BVH degrees and centimetres/inches/CMU units are converted inside the BVH
  reader (:mod:`tracker.motion.bvh`) and nowhere else.
* **World frame** is Z up; gravity is ``(0, 0, -9.81)``; after retargeting the
  character faces +X at ``t = 0``.
* **Quaternions** are scalar-last ``(x, y, z, w)``, as in PyBullet and
  :class:`scipy.spatial.transform.Rotation`.
* **Time**: a clip has ``fps`` (a float, never rounded) and ``n_frames``.
  Frame ``i`` is at ``t = i / fps`` and the duration is
  ``(n_frames - 1) / fps``.  Example: 802 frames at 120.00048 fps last
  6.6750 s and frame 120 is at t = 0.99999600 s.
* **Generalized coordinates**: ``q`` = base position (3), base quaternion (4),
  then 4 (spherical, quaternion) or 1 (revolute) per joint; ``v`` = base
  linear (3) and angular (3) velocity in the world frame, then 3 or 1 per
  joint.  :class:`tracker.character.layout.Layout` maps joint names to slices;
  nobody else counts indices.
* Per-joint settings (gains, limits) are keyed by joint name or pattern.
"""

__version__ = "0.1.0"
