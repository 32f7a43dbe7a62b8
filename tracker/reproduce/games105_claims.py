"""The claims table of ``docs/games105.md`` (block ``claims``), written from what the run measured.

:func:`claims_markdown` takes the ``facts`` the sections of :mod:`tracker.reproduce.games105` collect
and returns one row per claim of the lecture (or of Liu et al. for SAMCON): the claim, the slide's or
paper's number, ours, whether the two are like for like, and a verdict with its measured reason.
"""

from __future__ import annotations


def _fell(o) -> str:
    return f"falls at {o.fell_time_s:.3f} s" if o.fell else f"stands, CoM drift {o.com_drift_m:.4f} m"


def claims_markdown(facts: dict) -> str:
    """The ``claims`` block (see the module docstring)."""
    rows = []
    pd = facts.get("pd")
    if pd:
        rows.append(("Plain PD under semi-implicit Euler is stable iff every eigenvalue of A has \\|λ\\| ≤ 1",
                     "matrix A (slides \"Stability of PD Control\")",
                     f"measured divergence of PyBullet's 1-DOF joint = the eigenvalues' verdict on {pd['agree']} of "
                     f"{pd['cells']} cells; boundary k_p h² + 2 k_d h = 4",
                     "yes: PyBullet integrates semi-implicitly, unit inertia, explicit PD torque",
                     "✔" if pd["agree"] == pd["cells"] else f"✘ {pd['cells'] - pd['agree']} cells disagree"))
        slide, model = pd["limits"][0], pd["limits"][1]
        rows.append(("k_p = 200, k_d = 20 (joint servo) for a 50 kg character; h = 0.5–1 ms is often used",
                     "200 N·m/rad, 20 N·m·s/rad; 0.5–1 ms",
                     f"the same gains as plain PD on every joint of our {slide[1]:.0f} kg humanoid: stable up to h = "
                     f"{1e3 * slide[3]:.3f} ms ({slide[4]}'s mode); the model's own gains: {1e3 * model[3]:.3f} ms",
                     "no: the slide's character's link inertias are not given; ours has light hands and feet",
                     "✘ on our model: 0.5 ms is past plain PD's limit (measured, linearised)"))
    st = facts.get("standing", {})
    if st:
        none, cons, both = (st[("1/60", n)] for n in ("none (SPD alone)", "constraints, no feedback",
                                                      "jacobian (constraints + feedback)"))
        fb = st[("1/60", "feedback, no constraints")]
        rows.append(("Static balance: CoM feedback f = k_p(c̄ − c) − k_d ċ through τ = Jᵀ f keeps the character "
                     "standing", "no number (\"need to tune manually\")",
                     f"1/60 s, 30 s: SPD alone {_fell(none)}; constraints, no feedback {_fell(cons)}; feedback, no "
                     f"constraints {_fell(fb)}; both {_fell(both)}",
                     "yes: free root, SPD, the same stance; rows differ in one switch",
                     "✔ with the stance constraints" if not both.fell else "✘ falls"))
        ank, hip = st[("1/60", "ankle (constraints + feedback)")], st[("1/60", "hip (constraints + feedback)")]
        rows.append(("Apply the feedback at the ankles (ankle strategy) or hips (hip strategy)", "no number",
                     f"ankle {_fell(ank)}; hip {_fell(hip)} (1/60 s)", "yes",
                     ("✔ ankle" if not ank.fell else "✘ ankle") + (", ✘ hip" if hip.fell else ", ✔ hip")))
        spd30 = st[("1/30", "jacobian (constraints + feedback)")]
        rows.append(("h = 1/120 s ~ 1/60 s with stable PD", "1/120–1/60 s",
                     f"stands at 1/60 s and at 1/30 s ({_fell(spd30)})", "yes (SPD, free root)",
                     "✔" if not (both.fell or spd30.fell) else "✘"))
    if "push_best" in facts:
        rows.append(("Static balance survives pushes", "no number", f"largest 0.2 s push survived: "
                     f"{facts['push_best']:g} N (pushes table)", "—", "✔ small pushes only"))
    clips = facts.get("clips", {})
    if clips:
        status, fell, t_end = clips[("basketball_fast", True)]
        rows.append(("(ours, was contradictory on this page) the catch clip stands on a free root with balance",
                     "—", f"catch + basketball: {status}, " + ("no fall" if fell is None else f"falls at {fell:.3f} s")
                     + f", {t_end:.3f} s simulated", "—", "✔ stands" if fell is None and status == "ok" else "✘"))
    sc = facts.get("samcon")
    if sc:
        t, p = sc["track"], sc["plain"]
        stands = t["fell_at"] is None
        rows.append(("SAMCON turns a motion clip into an open-loop control trajectory (Liu et al. 2010)",
                     "no number on the slides",
                     f"committed track replayed: {'stands' if stands else 'falls'}; root error "
                     f"{t['root_error_mean_m']:.4f} m vs {p['root_error_mean_m']:.4f} m without offsets, joint error "
                     f"{t['joint_error_mean_rad']:.4f} vs {p['joint_error_mean_rad']:.4f} rad; without offsets it "
                     + ("stands too" if p["fell_at"] is None else f"falls at {p['fell_at']:.3f} s"),
                     "partly: our model, PyBullet, 1 s of an authored kick; the papers' clips and settings differ",
                     ("✔ stands" if stands else "✘ falls")
                     + (", root error lower, joint error higher (the cost weighs both)"
                        if t["root_error_mean_m"] < p["root_error_mean_m"] <= 1e9
                        and t["joint_error_mean_rad"] > p["joint_error_mean_rad"] else "")))
    lines = ["| claim | slide/paper number | ours | like for like? | verdict |", "|---|---|---|---|---|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)
