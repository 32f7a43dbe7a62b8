"""Retargeting: BVH motion onto a character model, as a :class:`Reference`.

``Reference`` is imported on first use (PEP 562), so that the light ``joint_map`` module can be
imported (by ``tracker inspect``) without numpy.
"""

from __future__ import annotations

# typing is not imported at run time: `tracker inspect` loads only what it runs.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from tracker.retarget.reference import Reference

__all__ = ["Reference", "load_clip_reference"]


def __getattr__(name: str):
    if name == "Reference":
        from tracker.retarget.reference import Reference

        return Reference
    raise AttributeError(f"module 'tracker.retarget' has no attribute {name!r}")


def load_clip_reference(
    clip: str | Path,
    model: str = "humanoid",
    joint_map: str | None = None,
    ik_feet: bool = False,
    ik_hands: bool = False,
    fps: float | None = None,
    drop_tpose: bool = True,
    unit: str | None = None,
    return_parts: bool = False,
    repair_glitches: bool = True,
    up_axis: str | None = None,
):
    """A reference for ``clip``: a saved ``.npz`` reference, a DeepMimic motion file, or a BVH retargeted now.

    Returns:
        the :class:`Reference`; with ``return_parts``, ``(reference, motion, kinematics)``
        (motion is None for a saved reference).
    """
    from pathlib import Path

    from tracker.character.model import load_model
    from tracker.retarget.reference import Reference
    from tracker.retarget.retarget import RetargetOptions, retarget

    mdl = load_model(model)
    path = Path(clip)
    if not path.exists():
        from tracker.errors import RetargetError

        raise RetargetError(f"{path}: no such clip")
    from tracker.retarget.deepmimic import is_deepmimic_file, read_deepmimic

    if is_deepmimic_file(path):
        ref = read_deepmimic(path, mdl)
        if fps is not None:
            ref = ref.resample(fps)
        return (ref, None, mdl.kinematics()) if return_parts else ref
    if path.suffix == ".npz":
        ref = Reference.load(path)
        if fps is not None:
            ref = ref.resample(fps)
        return (ref, None, mdl.kinematics()) if return_parts else ref
    from tracker.motion.bvh import read_bvh

    from tracker.errors import RetargetError

    motion = read_bvh(path, unit=unit, up_axis=up_axis)
    kin = mdl.kinematics()
    try:
        ref = retarget(
            motion, kin, joint_map,
            RetargetOptions(ik_feet=ik_feet, ik_hands=ik_hands, fps=fps, drop_tpose=drop_tpose,
                            repair_glitches=repair_glitches),
            spherical_limits=mdl.spherical_limits() if hasattr(mdl, "spherical_limits") else None,
            model_name=mdl.name, source=str(path),
        )
    except RetargetError as exc:  # every retargeting error names the clip it is about
        if not str(exc).startswith(str(path)):
            raise RetargetError(f"{path}: {exc}") from None
        raise
    return (ref, motion, kin) if return_parts else ref
