"""Gains by joint name and the Zordan–Hodgins gain schedule (pure numpy; one PyBullet cross-check)."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

from tracker.character.model import load_model
from tracker.control.base import Gains
from tracker.control.gains import build_gains, joint_gains, supported_masses
from tracker.control.schedule import GainSchedule, Schedule, smoothstep, zh_profile
from tracker.errors import ConfigError

DT = 1.0 / 60.0
K_T, K_R, T_E, T_F = 25000.0, 2500.0, 0.1, 0.5
LEFT_ARM_CHAIN = {"left_wrist", "left_elbow", "left_shoulder", "spine_upper", "spine_lower"}


@pytest.fixture(scope="module")
def model():
    return load_model("humanoid")


@pytest.fixture(scope="module")
def kin(model):
    return model.kinematics()


@pytest.fixture(scope="module")
def m_sup(model, kin):
    """Supported mass per joint DOF ``(nv - 6,)``, kg."""
    return model.layout.per_dof(supported_masses(kin))[6:]


def make_schedule(model, **kw) -> GainSchedule:
    sched = Schedule(k_t=kw.pop("k_t", K_T), k_r=kw.pop("k_r", K_R), t_e=kw.pop("t_e", T_E),
                     t_f=kw.pop("t_f", T_F), scope=kw.pop("scope", "chain"), enabled=kw.pop("enabled", True))
    return GainSchedule(model, DT, sched, **kw)


class FakeScenario:
    """A scenario whose ball touches links at given times (one event per step while touching)."""

    def __init__(self, contacts: dict[float, list[tuple[str, int]]] | None = None) -> None:
        self.events: list[dict] = []
        self.contacts = contacts or {}

    def after_step(self, t: float) -> None:
        for t0, hits in self.contacts.items():
            if abs(t - t0) < DT / 2:
                for link, ball in hits:
                    self.events.append({"t": t, "link": link, "impulse": [0.0, 1.5, 0.0], "ball": ball, "speed": 8.0})


def run(schedule: GainSchedule, scenario: FakeScenario, duration: float, base: Gains | None = None):
    """The simulation's loop: gains at t_n, then events stamped t_{n+1}. Returns times and gains."""
    fn = schedule.bind(scenario)
    t, ts, gains = 0.0, [], []
    for _ in range(round(duration / DT)):
        ts.append(t)
        gains.append(fn(t, base))
        t += DT
        scenario.after_step(t)
    return np.array(ts), gains


def step_times(t0: float, t1: float) -> list[float]:
    """Loop times (accumulated like the simulation's) in [t0, t1]."""
    t, out = 0.0, []
    while t <= t1 + 1e-9:
        if t >= t0 - 1e-9:
            out.append(t)
        t += DT
    return out


# -- supported masses -------------------------------------------------------------------

def test_supported_mass_of_a_joint_is_its_child_subtree(kin):
    m = supported_masses(kin)
    leg = kin.masses["left_thigh"] + kin.masses["left_shin"] + kin.masses["left_foot"]
    assert m["left_hip"] == pytest.approx(leg, abs=1e-12)
    assert m["left_hip"] == pytest.approx(13.902, abs=1e-9)  # 9.912 + 3.031 + 0.959 (humanoid.urdf)
    assert m["left_knee"] == pytest.approx(kin.masses["left_shin"] + kin.masses["left_foot"], abs=1e-12)
    assert m["left_wrist"] == pytest.approx(kin.masses["left_hand"], abs=1e-12)
    # spine_lower carries everything but the pelvis and the legs
    assert m["spine_lower"] == pytest.approx(kin.total_mass - kin.masses["pelvis"] - 2 * leg, abs=1e-9)
    arm = sum(kin.masses[f"left_{x}"] for x in ("upper_arm", "forearm", "hand"))
    assert m["spine_upper"] == pytest.approx(kin.masses["chest"] + kin.masses["head"] + 2 * arm, abs=1e-9)


@pytest.mark.parametrize("name", ["humanoid", "deepmimic"])
def test_supported_masses_equal_the_characters_own_through_pybullet(name):
    pybullet = pytest.importorskip("pybullet")
    from tracker.character.character import Character

    mdl = load_model(name)
    cid = pybullet.connect(pybullet.DIRECT)
    try:
        char = Character.load(cid, mdl)
        expected = char.supported_mass_vector()[6:]
    finally:
        pybullet.disconnect(cid)
    mine = mdl.layout.per_dof(supported_masses(mdl.kinematics()))[6:]
    np.testing.assert_allclose(mine, expected, rtol=0, atol=1e-9)


# -- build_gains --------------------------------------------------------------------------

def test_unscaled_gains_are_the_model_group_gains_and_the_root_gets_its_own(model):
    g = build_gains(model, DT)
    for s in model.layout.joints:
        grp = model.group_of(s.name)
        np.testing.assert_array_equal(g.kp[s.v], grp.kp)
        np.testing.assert_array_equal(g.kd[s.v], grp.kd)
        np.testing.assert_array_equal(g.tau_max[s.v], grp.torque_limit)
    np.testing.assert_array_equal(g.kp[:6], 2.0e5)
    np.testing.assert_allclose(g.kd[:6], 2.0e5 * DT, rtol=1e-15)
    assert np.isinf(g.tau_max[:6]).all()
    view = joint_gains(g, model.layout)
    assert view["left_hip"] == (800.0, 80.0, 250.0)
    assert view["root_angular"].kp == 2.0e5 and list(view)[:3] == ["root_linear", "root_angular", "spine_lower"]


def test_inertia_scaled_gains_are_k_times_supported_mass(model, kin, m_sup):
    g = build_gains(model, DT, k=K_T)
    np.testing.assert_allclose(g.kp[6:], K_T * m_sup, rtol=1e-15)
    hip = model.layout["right_hip"].v
    legs = kin.masses["right_thigh"] + kin.masses["right_shin"] + kin.masses["right_foot"]
    np.testing.assert_allclose(g.kp[hip], K_T * legs, rtol=1e-12)
    np.testing.assert_allclose(g.kd[6:], g.kp[6:] * DT, rtol=1e-15)  # k given: kd = kp·dt by default
    u = build_gains(model, DT, k=300.0, inertia_scaled=False, kd_ratio=2.0)
    np.testing.assert_array_equal(u.kp[6:], 300.0)
    np.testing.assert_allclose(u.kd[6:], 2.0 * 300.0 * DT, rtol=1e-15)


def test_kd_modes_ratio_absolute_and_name_keyed_overrides(model):
    lay = model.layout
    r = build_gains(model, DT, kd_mode="ratio", kd_ratio=1.5)
    np.testing.assert_allclose(r.kd[6:], 1.5 * r.kp[6:] * DT, rtol=1e-15)
    a = build_gains(model, DT, k=K_T, kd_mode="absolute", kd=12.0)
    np.testing.assert_array_equal(a.kd[6:], 12.0)
    # precedence: joint name > group name > pattern; unmatched joints keep the model's kd
    m = build_gains(model, DT, kd_mode="absolute", kd={".*_wrist": 3.0, "hips": 5.0, "left_hip": 7.0, "left_.*": 9.0})
    assert m.kd[lay["left_hip"].v].tolist() == [7.0] * 3
    assert m.kd[lay["right_hip"].v].tolist() == [5.0] * 3
    assert m.kd[lay["right_wrist"].v].tolist() == [3.0] * 3
    assert m.kd[lay["left_wrist"].v].tolist() == [9.0] * 3  # two patterns: the later one wins
    assert m.kd[lay["neck"].v].tolist() == [model.group_of("neck").kd] * 3
    with pytest.raises(ConfigError, match="'left_pinky'"):
        build_gains(model, DT, kd_mode="absolute", kd={"left_pinky": 1.0})


def test_gain_scale_root_modes_and_limits(model):
    base = build_gains(model, DT, k=K_T)
    s = build_gains(model, DT, k=K_T, gain_scale=0.5, root_kp=(1e4, 3e3), root_kd_ratio=2.0)
    np.testing.assert_allclose(s.kp[6:], 0.5 * base.kp[6:], rtol=1e-15)
    np.testing.assert_allclose(s.kd[6:], 0.5 * base.kd[6:], rtol=1e-15)
    np.testing.assert_array_equal(s.kp[:6], [1e4] * 3 + [3e3] * 3)
    np.testing.assert_allclose(s.kd[:6], 2.0 * s.kp[:6] * DT, rtol=1e-15)
    kin_root = build_gains(model, DT, k=K_T, root="kinematic")
    np.testing.assert_array_equal(kin_root.kp, base.kp)
    free = build_gains(model, DT, k=K_T, root="free")
    assert not free.kp[:6].any() and not free.kd[:6].any()
    unlimited = build_gains(model, DT, k=K_T, torque_limits=False)
    assert not unlimited.limited


@pytest.mark.parametrize("kwargs, message", [
    ({"kd_mode": "critical"}, "kd_mode 'critical' is not one of: auto, ratio, absolute"),
    ({"root": "floating"}, "root 'floating' is not one of"),
    ({"k": -1.0}, "k must be"),
    ({"gain_scale": float("nan")}, "gain_scale must be"),
    ({"root_kp": (1.0,)}, "root_kp must be"),
])
def test_build_gains_rejects_bad_options_with_a_clear_message(model, kwargs, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        build_gains(model, DT, **kwargs)
    with pytest.raises(ConfigError, match="dt must be"):
        build_gains(model, 0.0)


# -- the profile ----------------------------------------------------------------------------

@pytest.mark.parametrize("blend", ["log", "linear"])
def test_profile_holds_k_r_then_blends_back_c1_smoothly(blend):
    d = np.linspace(-0.2, T_E + T_F + 0.3, 20001)
    k = zh_profile(d, K_T, K_R, T_E, T_F, blend)
    assert (k[d < 0] == K_T).all() and zh_profile(np.inf, K_T, K_R, T_E, T_F, blend) == K_T
    assert (k[(d >= 0) & (d <= T_E)] == K_R).all()
    np.testing.assert_allclose(k[d >= T_E + T_F], K_T, rtol=1e-12)
    mid = zh_profile(T_E + T_F / 2, K_T, K_R, T_E, T_F, blend)
    assert mid == pytest.approx(math.sqrt(K_T * K_R) if blend == "log" else (K_T + K_R) / 2, rel=1e-12)
    # the blend is monotone and its slope is bounded by the analytic maximum
    blend_part = k[(d >= T_E) & (d <= T_E + T_F)]
    assert (np.diff(blend_part) >= 0).all()
    # |dk/dt| = |dB/dS| · S'(s) / t_f with S' <= 1.5 and dB/dS = k ln(k_t/k_r) <= k_t ln(k_t/k_r) (log), k_t - k_r (linear)
    slope_max = 1.5 / T_F * (K_T * math.log(K_T / K_R) if blend == "log" else K_T - K_R)
    # C¹ at both ends: one-sided slopes over h vanish like O(h) (a linear ramp would give slope_max/1.5)
    h = 1e-5 * T_F
    for end in (T_E, T_E + T_F):
        left = (zh_profile(end, K_T, K_R, T_E, T_F, blend) - zh_profile(end - h, K_T, K_R, T_E, T_F, blend)) / h
        right = (zh_profile(end + h, K_T, K_R, T_E, T_F, blend) - zh_profile(end, K_T, K_R, T_E, T_F, blend)) / h
        assert abs(left) < 1e-3 * slope_max and abs(right) < 1e-3 * slope_max
    fine = np.diff(k[(d > T_E) & (d < T_E + T_F)]) / (d[1] - d[0])
    assert fine.max() <= slope_max * (1 + 1e-6)
    if blend == "linear":  # the bound is reached at s = 1/2
        assert fine.max() == pytest.approx(slope_max, rel=1e-6)


def test_profile_edge_cases():
    assert smoothstep(-1.0) == 0.0 and smoothstep(2.0) == 1.0 and smoothstep(0.5) == 0.5
    # t_f = 0: straight back to k_t after t_e
    assert zh_profile(T_E, K_T, K_R, T_E, 0.0) == K_R and zh_profile(T_E + 1e-6, K_T, K_R, T_E, 0.0) == K_T
    # k_r = 0 cannot be blended in log space: linear fallback
    assert zh_profile(T_E + T_F / 2, K_T, 0.0, T_E, T_F, "log") == pytest.approx(K_T / 2, rel=1e-12)


# -- the schedule ---------------------------------------------------------------------------

def test_schedule_without_impacts_gives_the_tracking_gains(model):
    sched = make_schedule(model, kd_ratio=1.2)
    _, gains = run(sched, FakeScenario(), 0.5)
    ref = build_gains(model, DT, k=K_T, kd_ratio=1.2)
    for g in gains:
        np.testing.assert_array_equal(g.kp, ref.kp)
        np.testing.assert_allclose(g.kd, ref.kd, rtol=1e-15)
        np.testing.assert_array_equal(g.tau_max, ref.tau_max)
    as_model = make_schedule(model, scaling="model")(0.0)
    ref_model = build_gains(model, DT)
    np.testing.assert_allclose(as_model.kp, ref_model.kp, rtol=1e-15)
    np.testing.assert_allclose(as_model.kd, ref_model.kd, rtol=1e-15)


def test_an_impact_holds_k_r_for_t_e_then_blends_back_without_jumps(model, m_sup):
    t_c = 0.5
    sched = make_schedule(model, scope="all")
    ts, gains = run(sched, FakeScenario({t_c: [("left_hand", 0)]}), 1.6)
    kp = np.array([g.kp[6:] for g in gains]) / m_sup  # per-kg gain, (N, n)
    assert np.ptp(kp, axis=1).max() < 1e-6 * K_T  # scope all: every joint follows the same k(t)
    k = kp[:, 0]
    t_c_hit = ts[np.argmax(k < K_T)]
    assert t_c_hit == pytest.approx(t_c, abs=1e-9)  # the first step after the contact reacts
    np.testing.assert_allclose(k[ts < t_c - 1e-9], K_T, rtol=1e-12)
    during = (ts >= t_c - 1e-9) & (ts <= t_c + T_E + 1e-9)
    assert during.sum() == 7  # t_c, ..., t_c + 0.1 at 60 Hz
    np.testing.assert_allclose(k[during], K_R, rtol=1e-12)
    np.testing.assert_allclose(k[ts >= t_c + T_E + T_F - 1e-9], K_T, rtol=1e-9)
    blend = (ts >= t_c + T_E - 1e-9) & (ts <= t_c + T_E + T_F + 1e-9)
    steps = np.abs(np.diff(k[blend]))
    bound = 1.5 * K_T * math.log(K_T / K_R) / T_F * DT  # bound on |dk/dt|·dt of the log blend: 2878 per step
    assert steps.max() <= bound and steps.max() > 0.3 * bound
    assert (K_T - K_R) > 7 * bound  # a jump back would have been caught
    # C¹ at both ends: next to a constant, a C¹ curve moves by <= max|k''|·dt²/2 in one step (a kink: ~k'·dt).
    # |k''| = k ln(k_t/k_r) |ln(k_t/k_r) S'² + S''| / t_f² with S' = 0, |S''| = 6 at the ends.
    rho = math.log(K_T / K_R)
    assert steps[0] <= 1.1 * K_R * rho * 6 / T_F**2 * DT**2 / 2  # 19 (measured 18.8)
    assert steps[-1] <= 1.1 * K_T * rho * 6 / T_F**2 * DT**2 / 2  # 192 (measured 187; a kink: ~1900)
    # damping follows the gain: kd = kd_ratio · kp · dt at every step
    for g in gains:
        np.testing.assert_allclose(g.kd[6:], g.kp[6:] * DT, rtol=1e-15)


def test_a_second_impact_restarts_the_reaction(model, m_sup):
    t1, t2 = 0.5, 0.8  # the second lands during the blend back
    sched = make_schedule(model, scope="all")
    ts, gains = run(sched, FakeScenario({t1: [("chest", 0)], t2: [("chest", 0)]}), 2.0)
    k = np.array([g.kp[6] for g in gains]) / m_sup[0]
    at = lambda t: k[np.argmin(np.abs(ts - t))]
    assert K_R < at(t2 - DT) < K_T
    assert at(t2) == pytest.approx(K_R, rel=1e-12) and at(t2 + T_E) == pytest.approx(K_R, rel=1e-12)
    assert at(t2 + T_E + T_F / 2) == pytest.approx(math.sqrt(K_R * K_T), rel=1e-9)
    assert at(t2 + T_E + T_F) == pytest.approx(K_T, rel=1e-9)
    assert [i.t for i in sched.impacts] == pytest.approx([t1, t2], abs=1e-9)


def test_scope_chain_lowers_only_the_joints_from_the_hit_link_to_the_root(model):
    assert set(make_schedule(model).chain("left_hand")) == LEFT_ARM_CHAIN
    assert make_schedule(model).chain("right_foot") == ("right_ankle", "right_knee", "right_hip")
    assert make_schedule(model).chain("pelvis") == ()
    base = build_gains(model, DT, k=K_T, root_kp=(7e4, 9e4))
    sched = make_schedule(model, scope="chain")
    _, gains = run(sched, FakeScenario({0.5: [("left_hand", 0)]}), 0.6, base)
    g = gains[-1]
    lay = model.layout
    changed = {s.name for s in lay.joints if not np.array_equal(g.kp[s.v], base.kp[s.v])}
    assert changed == LEFT_ARM_CHAIN
    for name in changed:
        np.testing.assert_allclose(g.kp[lay[name].v], base.kp[lay[name].v] * K_R / K_T, rtol=1e-12)
    np.testing.assert_array_equal(g.kp[:6], base.kp[:6])  # the root comes from the simulation's base gains
    np.testing.assert_array_equal(g.kd[:6], base.kd[:6])
    assert sched.impacts[0].link == "left_hand" and set(sched.impacts[0].joints) == LEFT_ARM_CHAIN


def test_scope_all_lowers_every_joint_but_not_the_root(model):
    base = build_gains(model, DT, k=K_T)
    _, gains = run(make_schedule(model, scope="all"), FakeScenario({0.5: [("left_hand", 0)]}), 0.6, base)
    np.testing.assert_allclose(gains[-1].kp[6:], base.kp[6:] * K_R / K_T, rtol=1e-12)
    np.testing.assert_array_equal(gains[-1].kp[:6], base.kp[:6])


def test_disabled_schedule_keeps_k_t_but_records_the_impact(model):
    sched = make_schedule(model, scope="all", enabled=False)
    _, gains = run(sched, FakeScenario({0.5: [("left_hand", 0)]}), 1.0)
    ref = build_gains(model, DT, k=K_T)
    for g in gains:
        np.testing.assert_array_equal(g.kp, ref.kp)
    assert len(sched.impacts) == 1 and sched.state(0.55) == "tracking"


def test_a_ball_resting_on_a_link_does_not_restart_the_reaction_forever(model, m_sup):
    # touching every step from 0.5 to 1.5 s, then again after a 0.3 s gap
    touching = {t: [("left_hand", 0)] for t in step_times(0.5, 1.5)}
    touching.update({t: [("left_hand", 0)] for t in step_times(1.8, 1.9)})
    sched = make_schedule(model)
    ts, gains = run(sched, FakeScenario(touching), 2.0)
    assert [round(i.t, 6) for i in sched.impacts] == [0.5, 1.8]
    j = model.layout["left_wrist"].v.start - 6
    k = np.array([g.kp[6 + j] for g in gains]) / m_sup[j]
    np.testing.assert_allclose(k[(ts > 0.5 + T_E + T_F) & (ts < 1.8 - 1e-9)], K_T, rtol=1e-9)
    # a gap shorter than min_separation does not start a new impact
    short = {t: [("left_hand", 0)] for t in step_times(0.5, 0.6) + step_times(0.65, 0.7)}
    sched2 = make_schedule(model, min_separation=0.1)
    run(sched2, FakeScenario(short), 1.0)
    assert len(sched2.impacts) == 1


def test_links_touched_in_the_same_episode_react_each_once(model):
    # a volleyball on both forearms in one step, resting there; a second ball hits the head later
    contacts = {t: [("left_forearm", 0), ("right_forearm", 0)] for t in step_times(0.5, 0.7)}
    contacts[0.6] = contacts.get(0.6, []) + [("head", 1)]
    sched = make_schedule(model)
    scenario = FakeScenario(contacts)
    run(sched, scenario, 1.0)
    assert [(i.link, i.ball) for i in sched.impacts] == [("left_forearm", 0), ("right_forearm", 0), ("head", 1)]
    assert len(scenario.events) == 2 * 13 + 1


def test_events_are_taken_at_their_time_and_filtered_and_never_modified(model):
    sched = make_schedule(model, scope="all", min_impulse=0.5)
    events = [
        {"t": 0.2, "link": "left_hand", "impulse": [0.0, 0.1, 0.0], "ball": 0},  # too weak
        {"t": 0.3, "link": "goalpost", "impulse": 2.0, "ball": 0},  # not a link of the character
        {"t": 0.5, "link": "chest", "impulse": [0.0, 3.0, 4.0], "ball": 0},
    ]
    snapshot = copy.deepcopy(events)
    tracking = sched(0.4, None, events).kp
    assert sched.impacts == () and sched.n_ignored == 2
    assert sched.state(0.45) == "tracking"
    reacting = sched(0.5, None, events).kp
    np.testing.assert_allclose(reacting[6:], tracking[6:] * K_R / K_T, rtol=1e-12)
    assert sched.impacts[0].impulse == pytest.approx(5.0)
    assert events == snapshot


def test_state_reports_tracking_reacting_recovering(model):
    sched = make_schedule(model)
    sched(0.5, None, [{"t": 0.5, "link": "right_foot", "impulse": 1.0, "ball": 0}])
    assert sched.state(0.4) == "tracking"
    assert sched.state(0.5) == "reacting" and sched.state(0.5 + T_E) == "reacting"
    assert sched.state(0.5 + T_E + 0.01) == "recovering"
    assert sched.state(0.5 + T_E + T_F) == "tracking"
    js = sched.joint_state(0.55)
    assert js["right_knee"] == "reacting" and js["left_knee"] == "tracking"


def test_runtime_set_takes_effect_at_the_next_call(model, m_sup):
    sched = make_schedule(model, scope="all")
    events = [{"t": 0.5, "link": "chest", "impulse": 1.0, "ball": 0}]
    np.testing.assert_allclose(sched(0.1, None, events).kp[6:], K_T * m_sup, rtol=1e-12)
    sched.set(k_t=30000.0)
    np.testing.assert_allclose(sched(0.2, None, events).kp[6:], 30000.0 * m_sup, rtol=1e-12)
    sched.set(k_r=1000.0, t_e=0.3)
    np.testing.assert_allclose(sched(0.75, None, events).kp[6:], 1000.0 * m_sup, rtol=1e-12)  # still reacting
    sched.set(t_f=0.2, gain_scale=2.0)
    g = sched(1.0, None, events)
    np.testing.assert_allclose(g.kp[6:], 2.0 * 30000.0 * m_sup, rtol=1e-9)  # 0.5 + 0.3 + 0.2: back
    np.testing.assert_allclose(g.kd[6:], g.kp[6:] * DT, rtol=1e-15)
    assert g.kp[0] == 2.0e5  # the global scale leaves the root alone
    with pytest.raises(ConfigError, match="k_t"):
        sched.set(k_t=0.0, k_r=10.0)
    assert sched.params.k_t == 30000.0 and sched.params.k_r == 1000.0  # nothing changed
    with pytest.raises(ConfigError, match="scope"):
        sched.set(scope="neighbours")


def test_absolute_kd_follows_kp_through_the_reaction(model):
    sched = make_schedule(model, scaling="model", scope="all")  # auto -> absolute model kd
    g = sched(0.55, None, [{"t": 0.5, "link": "chest", "impulse": 1.0, "ball": 0}])
    ref = build_gains(model, DT)
    np.testing.assert_allclose(g.kp[6:], ref.kp[6:] * K_R / K_T, rtol=1e-12)
    np.testing.assert_allclose(g.kd[6:], ref.kd[6:] * K_R / K_T, rtol=1e-12)


def test_bind_follows_the_scenario_across_a_reset(model):
    sched = make_schedule(model, scope="all")
    scenario = FakeScenario({0.5: [("chest", 0)]})
    fn = sched.bind(scenario)
    ts, _ = run(sched, scenario, 0.55)
    assert sched.state(ts[-1]) == "reacting"
    scenario.events = []  # the scenario resets; the simulation starts again at t = 0
    g = fn(0.0, None)
    np.testing.assert_array_equal(g.kp, build_gains(model, DT, k=K_T).kp)
    assert sched.impacts == ()


def test_schedule_rejects_bad_settings(model):
    with pytest.raises(ConfigError, match="min_separation must exceed dt"):
        make_schedule(model, min_separation=DT)
    with pytest.raises(ConfigError, match="scaling 'inertia' is not one of: mass, uniform, model"):
        make_schedule(model, scaling="inertia")
    with pytest.raises(ConfigError, match="schedule.t_f"):
        make_schedule(model, t_f=-0.1)
    with pytest.raises(ConfigError, match="no link 'tail'"):
        make_schedule(model).chain("tail")
