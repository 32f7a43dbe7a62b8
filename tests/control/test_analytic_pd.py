"""analytic_pd (Weinstein et al. 2008): algebra on fakes, bad options, exactness on the humanoid."""

from __future__ import annotations

import numpy as np
import pytest

from tracker.character.layout import Layout
from tracker.control import closed_form as cf
from tracker.control.analytic_pd import AnalyticPDController
from tracker.control.base import Gains, State, Target
from tracker.control.registry import create, names
from tracker.errors import ConfigError, SimulationError

from .conftest import FixedDynamics, random_q, random_spd


def _layout():
    return Layout.build([("a", "spherical"), ("b", "revolute"), ("c", "spherical")], has_base=True)


def test_registered_and_selectable_by_name():
    assert "analytic_pd" in names()


def test_one_step_reaches_the_closed_form_prediction_on_a_fake_body():
    # With v' = v + h M⁻¹(τ − c) and q' = q ⊕ h v', the step ends at q̄(t_{n+1}) ⊕ E(h) exactly
    # (tolerance 1e-10: rounding of the solve and the quaternion maps).
    lay = _layout()
    rng = np.random.default_rng(3)
    m, c = random_spd(lay.nv, rng), rng.normal(size=lay.nv)
    ctrl = AnalyticPDController(lay, FixedDynamics(m, c))
    q, v = random_q(lay, rng), rng.normal(size=lay.nv)
    q1, v1 = random_q(lay, rng), rng.normal(size=lay.nv)
    q0 = lay.integrate(q, 0.05 * rng.normal(size=lay.nv), 1.0)  # reference at t_n near the state
    h = 1 / 60
    gains = Gains(rng.uniform(10, 1000, lay.nv), np.zeros(lay.nv))
    tau = ctrl.torques(State(q, v), Target(q1, v1, q0, rng.normal(size=lay.nv)), gains, h)
    v_new = v + h * np.linalg.solve(m, tau - c)
    q_new = lay.integrate(q, v_new, h)
    assert np.max(np.abs(lay.difference(q_new, q1) - ctrl.predicted_error)) < 1e-10


def test_revolute_prediction_is_the_doubled_closed_form():
    lay = Layout.build([("j", "revolute")], has_base=False)
    m = np.array([[2.0]])
    ctrl = AnalyticPDController(lay, FixedDynamics(m, np.zeros(1)))
    kp_torque, h = 50.0, 0.1
    e0, de0 = 0.3, -1.0
    ctrl.torques(State(np.array([e0]), np.array([de0])), Target(np.zeros(1), np.zeros(1), np.zeros(1), np.zeros(1)),
                 Gains([kp_torque], [0.0]), h)
    kp = kp_torque / 2.0  # k_p = kp / M_kk
    e_h, _ = cf.solve(e0, de0, 2 * kp, 2 * float(cf.critical_kv(kp)), h)
    assert ctrl.predicted_error[0] == pytest.approx(float(e_h), abs=1e-15)
    single = AnalyticPDController(lay, FixedDynamics(m, np.zeros(1)), prediction="single")
    single.torques(State(np.array([e0]), np.array([de0])), Target(np.zeros(1), np.zeros(1), np.zeros(1), np.zeros(1)),
                   Gains([kp_torque], [0.0]), h)
    assert single.predicted_error[0] == pytest.approx(float(cf.solve(e0, de0, kp, cf.critical_kv(kp), h)[0]),
                                                      abs=1e-15)


def test_spherical_error_along_its_axis_is_the_papers_scalar_form():
    # Isotropic gains: E(h) is parallel to E(0) when the relative velocity is along it (paper: E(0) = |v|).
    lay = Layout.build([("s", "spherical")], has_base=False)
    ctrl = AnalyticPDController(lay, FixedDynamics(np.eye(3), np.zeros(3)), gain_units="acceleration")
    axis = np.array([1.0, 2.0, -2.0]) / 3.0
    ang, rate = 0.4, 0.7
    q = np.concatenate([np.sin(ang / 2) * axis, [np.cos(ang / 2)]])
    ident = np.array([0, 0, 0, 1.0])
    ctrl.torques(State(q, rate * axis), Target(ident, np.zeros(3), ident, np.zeros(3)), Gains([80.0] * 3, [0] * 3),
                 0.05)
    e_h, _ = cf.solve(ang, rate, 160.0, 2 * float(cf.critical_kv(80.0)), 0.05)
    assert np.allclose(ctrl.predicted_error, float(e_h) * axis, atol=1e-14)


def test_free_root_partition_gives_no_root_force_and_reaches_the_joint_predictions():
    lay = _layout()
    rng = np.random.default_rng(5)
    m, c = random_spd(lay.nv, rng), rng.normal(size=lay.nv)
    passive = np.zeros(lay.nv, bool)
    passive[:6] = True
    ctrl = AnalyticPDController(lay, FixedDynamics(m, c), passive=passive, partition=True)
    q, v, q1 = random_q(lay, rng), rng.normal(size=lay.nv), random_q(lay, rng)
    h = 0.02
    tau = ctrl.torques(State(q, v), Target(q1, np.zeros(lay.nv), q, np.zeros(lay.nv)),
                       Gains(np.full(lay.nv, 300.0), np.zeros(lay.nv)), h)
    assert np.all(tau[:6] == 0.0)
    v_new = v + h * np.linalg.solve(m, tau - c)
    err = lay.difference(lay.integrate(q, v_new, h), q1)
    assert np.max(np.abs(err[6:] - ctrl.predicted_error[6:])) < 1e-10


def test_torque_limits_clip_flag_and_leave_the_other_dofs_exact():
    lay = Layout.build([(f"j{k}", "revolute") for k in range(4)], has_base=False)
    rng = np.random.default_rng(7)
    m, c = random_spd(4, rng), rng.normal(size=4)
    ctrl = AnalyticPDController(lay, FixedDynamics(m, c))
    q, v, tgt = np.zeros(4), np.zeros(4), np.array([1.0, -0.5, 0.2, 0.8])
    lim = np.array([np.inf, 0.5, np.inf, np.inf])
    h = 0.02
    tau = ctrl.torques(State(q, v), Target(tgt, np.zeros(4), tgt, np.zeros(4)), Gains([500.0] * 4, [0] * 4, lim), h)
    assert ctrl.clipped == 1 and ctrl.report()["analytic_pd_clipped_steps"] == 1
    assert abs(tau[1]) == pytest.approx(0.5)
    v_new = v + h * np.linalg.solve(m, tau - c)
    err = q + h * v_new - tgt
    free = [0, 2, 3]
    assert np.max(np.abs(err[free] - ctrl.predicted_error[free])) < 1e-10
    assert abs(err[1] - ctrl.predicted_error[1]) > 1e-3


@pytest.mark.parametrize("kwargs, match", [
    ({"prediction": "triple"}, "prediction 'triple'"),
    ({"gain_units": "furlongs"}, "gain_units"),
    ({"damping_ratio": -1.0}, "damping_ratio"),
    ({"passive": np.arange(6)}, "free-root partition"),
])
def test_bad_options_are_config_errors(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        create("analytic_pd", layout=_layout(), dynamics=FixedDynamics(np.eye(13), np.zeros(13)), **kwargs)


def test_missing_target_at_t_n_is_a_simulation_error():
    lay = Layout.build([("j", "revolute")], has_base=False)
    ctrl = AnalyticPDController(lay, FixedDynamics(np.eye(1), np.zeros(1)))
    with pytest.raises(SimulationError, match="t_n"):
        ctrl.torques(State(np.zeros(1), np.zeros(1)), Target(np.zeros(1), np.zeros(1)), Gains([1.0], [0.0]), 0.1)


@pytest.mark.parametrize("dt", [1 / 60, 1 / 30])
def test_humanoid_per_step_error_equals_each_joints_prediction_without_contact(dt):
    # Ground removed, torque limits off: q^{n+1} ⊖ q̄^{n+1} == E(h) per DOF to 1e-9 (we see ~1e-15).
    import pybullet as p

    from tests.sim.test_tracking import MOCAP
    from tracker.character.model import load_model
    from tracker.retarget import load_clip_reference
    from tracker.sim.simulation import SimOptions, Simulation

    ref = load_clip_reference(MOCAP / "cmu_10_01_soccer_kick.bvh")
    sim = Simulation(load_model("humanoid"), ref, SimOptions(controller="analytic_pd", dt=dt, start=1.0))
    try:
        p.removeBody(sim.world.ground, physicsClientId=sim.world.client)
        g = sim.base_gains
        sim.base_gains = sim.gains = Gains(g.kp, g.kd, None)
        worst, moved = 0.0, 0.0
        for _ in range(40):
            row = sim.step()
            err = sim.layout.difference(row["q"], row["q_ref"])
            worst = max(worst, float(np.max(np.abs(err - sim.controller.predicted_error))))
            moved = max(moved, float(np.max(np.abs(sim.controller.predicted_error))))
    finally:
        sim.close()
    assert worst < 1e-9
    assert moved > 1e-6  # the predictions are not trivially zero


@pytest.mark.parametrize("argv, message", [
    (["track", "CLIP", "--controller", "analytic_pd", "--gain-scale", "-1"], "--gain-scale must be > 0"),
    (["track", "CLIP", "--controller", "analytic_pd", "--root", "free"], "free-root partition"),
    (["track", "CLIP", "--controller", "analytic_pd", "--prediction", "foo"], "prediction 'foo'"),
    (["run", "CONFIG", "--set", "controller.name=analytic_pd", "--set", "root.mode=free"], "free-root partition"),
    (["run", "CONFIG", "--set", "controller.name=analytic_pd", "--set", "controller.analytic.prediction=x"],
     "controller.analytic.prediction"),
    (["run", "CONFIG", "--set", "controller.name=analytic_pd", "--set", "controller.gains.k_t=-5"],
     "controller.gains.k_t: must be >= 0"),
])
def test_bad_options_give_one_line_and_status_2(argv, message, capsys, tmp_path):
    from tests.sim.test_tracking import MOCAP
    from tracker.cli import main
    from tracker.paths import CONFIG_DIR

    argv = [str(MOCAP / "cmu_02_01_walk.bvh") if a == "CLIP" else str(CONFIG_DIR / "soccer_light.yaml")
            if a == "CONFIG" else a for a in argv]
    if argv[0] == "run":
        argv += ["--out", str(tmp_path / "out")]
    assert main(argv + (["--duration", "0.1"] if argv[0] == "track" else [])) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


@pytest.mark.parametrize("mode, zeta, tv", [("doubled", 1.0, "ref"), ("single", 0.5, "ref"), ("doubled", 2.0, "zero")])
def test_compiled_kernel_equals_the_numpy_reference(mode, zeta, tv):
    lay = _layout()
    rng = np.random.default_rng(11)
    m, c = random_spd(lay.nv, rng), rng.normal(size=lay.nv)
    ctrl = AnalyticPDController(lay, FixedDynamics(m, c), prediction=mode, damping_ratio=zeta, target_velocity=tv)
    for _ in range(5):
        q, v = random_q(lay, rng), rng.normal(size=lay.nv)
        tgt = Target(random_q(lay, rng), rng.normal(size=lay.nv), lay.integrate(q, 0.3 * rng.normal(size=lay.nv), 1),
                     rng.normal(size=lay.nv))
        kp = rng.uniform(1, 1e4, lay.nv)
        tau = ctrl.torques(State(q, v), tgt, Gains(kp * m.diagonal(), np.zeros(lay.nv)), 0.02)
        e_h, w = ctrl.predict(q, v, tgt, kp, 0.02)
        assert np.max(np.abs(ctrl.predicted_error - e_h)) < 1e-12
        assert np.max(np.abs(tau - (m @ (w - v) / 0.02 + c))) < 1e-8 * max(1.0, np.abs(tau).max())


@pytest.mark.parametrize("name", ["soccer_light", "soccer_heavy", "volleyball_slow", "volleyball_fast",
                                  "basketball_slow", "basketball_fast"])
def test_the_six_ball_scenarios_run_with_analytic_pd_and_the_schedule(name):
    # Full scenarios (ball, Zordan–Hodgins schedule on) at the configs' 1/60 s, cut to 2 s after the impacts.
    from tests.scenarios.test_six_scenarios import CONFIGS, INTENDED
    from tracker.experiments.config import load_config
    from tracker.experiments.runner import build, simulate

    cfg = load_config(CONFIGS / f"{name}.yaml", [("controller.name", "analytic_pd"), ("sim.duration", 2.0)])
    rec, outcome = simulate(build(cfg), balls=True)
    assert not rec.diverged, rec.message
    ball = outcome["balls"][0]
    assert ball["first_contact_link"] in INTENDED[name.split("_")[0]]
    assert abs(ball["first_contact_time"] - cfg.balls[0].impact_time) <= 0.050
    assert (rec.kp[:, 6:] < 0.5 * rec.kp[0, 6:]).any()  # the schedule dropped some joint's own gain


def test_the_controller_comparison_sweep_is_valid_and_covers_every_controller():
    from tracker.experiments.sweep import load_sweep
    from tracker.paths import CONFIG_DIR

    sw = load_sweep(CONFIG_DIR / "sweeps" / "controllers.yaml")
    assert len(sw.runs) == 4 * 3 * 5
    assert set(sw.config.grid["controller.name"]) >= {"pd", "spd", "native", "analytic_pd", "vt"}
    cfg = sw.run_config(sw.runs[-1])
    assert cfg.controller.name == "vt" and cfg.balls


def test_velocity_across_the_error_decays_as_exp_minus_sqrt_kp_h_with_plain_gains():
    # CONTROLLERS.md §3 (re-derived): with E₀ = 0 the secant velocity is ω⊥·e^{−√k_p h} for plain
    # critical gains; with doubled gains it is ω⊥·e^{−2√k_p h}·sinh(√2·√k_p h)/(√2·√k_p h).
    lay = Layout.build([("s", "spherical")], has_base=False)
    ident = np.array([0, 0, 0, 1.0])
    w = np.array([0.3, -0.2, 0.5])
    kp, h = 90.0, 0.05
    s = np.sqrt(kp)
    for mode, factor in (("single", np.exp(-s * h)),
                         ("doubled", np.exp(-2 * s * h) * np.sinh(np.sqrt(2) * s * h) / (np.sqrt(2) * s * h))):
        ctrl = AnalyticPDController(lay, FixedDynamics(np.eye(3), np.zeros(3)), gain_units="acceleration",
                                    prediction=mode)
        tau = ctrl.torques(State(ident, w), Target(ident, np.zeros(3), ident, np.zeros(3)), Gains([kp] * 3, [0] * 3), h)
        w_new = w + h * tau  # M = I, c = 0
        assert np.allclose(w_new, factor * w, atol=1e-12), mode
