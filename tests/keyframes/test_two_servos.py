"""The two cross-faded servos of Tan 2011 §4.2 against one SPD/PD with summed gains, and the profiles."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from tracker.character.layout import Layout
from tracker.control import registry
from tracker.control.base import Gains, State, Target
from tracker.control.keyframe_spd import KeyframePD, KeyframeSPD, KeyTarget
from tracker.control.spd import SPDController
from tracker.errors import ConfigError
from tracker.keyframes.profile import FLOOR, GainProfile
from tracker.sim.pendulum import PendulumParams, TwoLinkPendulum


class FixedDynamics:
    def __init__(self, mass, bias):
        self.mass, self.bias = np.asarray(mass, float), np.asarray(bias, float)

    def mass_matrix(self, q):
        return self.mass

    def bias_forces(self, q, v):
        return self.bias


def _scalar_case(rng, nv: int):
    q, v = rng.uniform(-2, 2, nv), rng.uniform(-3, 3, nv)
    qa, qb = rng.uniform(-2, 2, nv), rng.uniform(-2, 2, nv)
    va, vb = rng.uniform(-1, 1, nv), rng.uniform(-1, 1, nv)
    wa, wb = GainProfile("poly", rng.uniform(1, 8)).weights(rng.uniform())
    return q, v, qa, qb, va, vb, np.full(nv, float(wa)), np.full(nv, float(wb))


@pytest.mark.parametrize("prediction", ["semi_implicit", "explicit"])
def test_two_spd_servos_equal_one_spd_with_summed_gains_toward_the_weighted_target(prediction):
    rng = np.random.default_rng(42)
    pend = TwoLinkPendulum(PendulumParams.uniform_rods(1.0, 0.7, 1.0, 0.8))
    lay = pend.layout
    two = KeyframeSPD(lay, pend, prediction=prediction)
    one = SPDController(lay, pend, target_velocity="ref", prediction=prediction)
    worst = 0.0
    for dt in (1 / 60, 1 / 30, 1 / 240):
        for _ in range(200):
            q, v, qa, qb, va, vb, wa, wb = _scalar_case(rng, lay.nv)
            kp = rng.uniform(1, 300, lay.nv)
            gains = Gains(kp, 10 * kp * dt)
            tau2 = two.torques(State(q, v), KeyTarget(qa, va, qa, qb, va, vb, wa, wb), gains, dt)
            w = wa + wb
            q_bar = (wa * qa + wb * qb) / w
            v_bar = (wa * va + wb * vb) / w
            tau1 = one.torques(State(q, v), Target(q_bar, v_bar), Gains(kp * w, 10 * kp * dt * w), dt)
            worst = max(worst, float(np.abs(tau2 - tau1).max()))
    assert worst <= 1e-12


def test_two_pd_servos_equal_one_pd_with_summed_gains():
    rng = np.random.default_rng(7)
    lay = Layout.build([("a", "revolute"), ("b", "revolute"), ("c", "revolute")], has_base=False)
    two = KeyframePD(lay)
    one = registry.create("pd", layout=lay, dynamics=None, target_velocity="ref")
    for _ in range(100):
        q, v, qa, qb, va, vb, wa, wb = _scalar_case(rng, lay.nv)
        kp = rng.uniform(1, 300, lay.nv)
        tau2 = two.torques(State(q, v), KeyTarget(qa, va, qa, qb, va, vb, wa, wb), Gains(kp, 0.1 * kp), 1 / 60)
        w = wa + wb
        tau1 = one.torques(State(q, v), Target((wa * qa + wb * qb) / w, (wa * va + wb * vb) / w),
                           Gains(kp * w, 0.1 * kp * w), 1 / 60)
        assert np.abs(tau2 - tau1).max() <= 1e-12


def test_on_rotations_the_servos_sum_their_log_errors():
    """For a base and spherical joints there is no single blended target; the torque is the sum of the
    two servos' rotation-vector errors at the predicted state (checked with an independent formula)."""
    rng = np.random.default_rng(3)
    lay = Layout.build([("chest", "spherical"), ("knee", "revolute")], has_base=True)
    n = lay.nv
    a = rng.normal(size=(n, n))
    dyn = FixedDynamics(a @ a.T + n * np.eye(n), rng.normal(size=n))
    ctrl = KeyframeSPD(lay, dyn, prediction="explicit")
    dt = 1 / 30

    def rand_q():
        q = lay.neutral_q()
        q[0:3] = rng.normal(size=3)
        q[3:7] = Rotation.random(random_state=rng).as_quat()
        q[lay["chest"].q] = Rotation.random(random_state=rng).as_quat()
        q[lay["knee"].q] = rng.uniform(-1, 1)
        return q

    q, qa, qb = rand_q(), rand_q(), rand_q()
    v = rng.normal(size=n)
    wa, wb = np.full(n, 0.3), np.full(n, 0.6)
    kp = rng.uniform(10, 100, n)
    kd = kp * dt
    z = np.zeros(n)
    tau = ctrl.torques(State(q, v), KeyTarget(qa, z, qa, qb, z, z, wa, wb), Gains(kp, kd), dt)
    pred = lay.integrate(q, v, dt)
    f = kp * (wa * lay.difference(qa, pred) + wb * lay.difference(qb, pred)) - kd * (wa + wb) * v
    acc = np.linalg.solve(dyn.mass + np.diag(kd * (wa + wb) * dt), f - dyn.bias)
    assert tau == pytest.approx(f - kd * (wa + wb) * dt * acc, abs=1e-10)


def test_the_keyframe_controllers_are_registered_and_refuse_a_plain_target():
    assert {"keyframe_spd", "keyframe_pd"} <= set(registry.names())
    lay = Layout.build([("a", "revolute")], has_base=False)
    ctrl = registry.create("keyframe_spd", layout=lay, dynamics=FixedDynamics([[1.0]], [0.0]))
    with pytest.raises(ConfigError, match="need a keyframe file"):
        ctrl.torques(State(np.zeros(1), np.zeros(1)), Target(np.zeros(1), np.zeros(1)), Gains([1.0], [0.1]), 0.01)


def test_a_key_target_unpacks_like_a_target():
    t = KeyTarget(*(np.full(2, float(k)) for k in range(8)))
    q, v = t
    assert q.tolist() == [0.0, 0.0] and v.tolist() == [1.0, 1.0]


@pytest.mark.parametrize("kind,power", [("poly", 2.0), ("poly", 8.0), ("poly", 0.5), ("linear", 1.0)])
def test_the_gain_profiles_end_points(kind, power):
    prof = GainProfile(kind, power)
    wa0, wb0 = prof.weights(0.0)
    wa1, wb1 = prof.weights(1.0)
    assert (float(wa0), float(wb0)) == (1.0, FLOOR)  # at key i: full gain toward it, 0.005 toward i+1
    assert (float(wa1), float(wb1)) == (0.0, 1.0 + FLOOR)  # at key i+1: nothing toward i
    a = np.linspace(0, 1, 101)
    wa, wb = prof.weights(a)
    assert np.all(np.diff(wa) <= 0) and np.all(np.diff(wb) >= 0)
    assert prof.weights(-0.5)[0] == 1.0 and prof.weights(1.5)[1] == 1.0 + FLOOR  # clipped


def test_the_paper_numbers_at_mid_interval():
    assert float(np.add(*GainProfile("poly", 2).weights(0.5))) == pytest.approx(0.505)
    assert float(np.add(*GainProfile("poly", 8).weights(0.5))) == pytest.approx(2 * 0.5**8 + 0.005)
    assert float(np.add(*GainProfile("linear").weights(0.5))) == pytest.approx(1.005)


@pytest.mark.parametrize("kind,power", [("cubic", 2.0), ("poly", 0.0), ("poly", float("nan"))])
def test_a_bad_profile_is_refused(kind, power):
    with pytest.raises(ConfigError):
        GainProfile(kind, power)
