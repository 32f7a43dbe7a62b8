"""Small non-humanoid scenes that the paper reproductions need, kept together.

One module per scene (a plank chain, the toy mouse, particles on curves for
Tan's tinkertoy, a box-pushing desk, ...). Each builds its own URDF or pure
numpy system, states the masses, lengths and times it chose where the paper
gives none, and is used by the reproductions in :mod:`tracker.reproduce`.
"""
