"""The Character adapter: names, zero pose, masses, state round trips, contacts, ragdoll drop."""

from __future__ import annotations

import numpy as np
import pybullet as p
import pytest
from scipy.spatial.transform import Rotation

from tracker.character.character import Character
from tracker.character.model import load_model
from tracker.errors import ModelError

from .conftest import HUMANOID_JOINTS, HUMANOID_LINKS, add_ground, random_state, same_rotations


def test_humanoid_has_the_agreed_joints_in_order_and_37_actuated_dofs(client):
    char = Character.load(client, "humanoid")
    assert tuple((s.name, s.kind) for s in char.layout.joints) == HUMANOID_JOINTS
    assert char.layout.n_actuated_dofs == 37
    assert (char.layout.nq, char.layout.nv) == (7 + 11 * 4 + 4, 6 + 37)
    assert char.link_names == HUMANOID_LINKS
    assert char.layout.names == load_model("humanoid").layout.names
    assert char.link_index("pelvis") == -1 and char.link_name(char.link_index("left_hand")) == "left_hand"
    with pytest.raises(ModelError, match="no link 'left_paw'.*left_hand"):
        char.link_index("left_paw")


def test_deepmimic_joints_are_its_urdfs_non_fixed_joints(client):
    char = Character.load(client, "deepmimic")
    assert char.layout.names == ("chest", "neck", "right_hip", "right_knee", "right_ankle", "right_shoulder",
                                 "right_elbow", "left_hip", "left_knee", "left_ankle", "left_shoulder", "left_elbow")
    assert char.layout.n_actuated_dofs == 8 * 3 + 4


@pytest.mark.parametrize("name", ["humanoid", "deepmimic"])
def test_every_link_frame_is_world_aligned_in_the_zero_pose(client, name):
    """Z up, facing +X for both models (DeepMimic's Y-up URDF included): all link orientations identity."""
    char = Character.load(client, name)
    poses = char.link_poses()
    assert set(poses) == set(char.link_names)
    quats = np.array([orn for _, orn in poses.values()])
    assert same_rotations(quats, np.tile([0, 0, 0, 1.0], (len(quats), 1))) < 1e-9
    pos = {k: v[0] for k, v in poses.items()}
    left, right = ("left_hand", "right_hand") if name == "humanoid" else ("left_wrist", "right_wrist")
    assert pos[left][1] > 0.1 > -0.1 > pos[right][1]  # +Y is the character's left
    head = "head" if name == "humanoid" else "neck"
    assert pos[head][2] > pos[left][2]  # arms hang below the neck


def test_humanoid_zero_pose_geometry(client):
    """Joint positions (m) follow from de Leva's lengths scaled to 1.75 m; elbows and knees straight."""
    char = Character.load(client, "humanoid")
    pos = {k: v[0] for k, v in char.link_poses().items()}
    s = 1.75 / 1.741
    assert pos["left_shin"][2] - pos["left_foot"][2] == pytest.approx(0.4340 * s, abs=1e-6)  # KJC-LMAL
    assert pos["left_thigh"][2] - pos["left_shin"][2] == pytest.approx(0.4222 * s, abs=1e-6)  # HJC-KJC
    assert pos["left_upper_arm"][2] - pos["left_forearm"][2] == pytest.approx(0.2817 * s, abs=1e-6)
    assert pos["left_forearm"][2] - pos["left_hand"][2] == pytest.approx(0.2689 * s, abs=1e-6)
    for a, b in (("left_thigh", "right_thigh"), ("left_hand", "right_hand"), ("left_foot", "right_foot")):
        assert np.allclose(pos[a] * [1, -1, 1], pos[b], atol=1e-9)  # left/right mirror images


@pytest.mark.parametrize("name, tol", [("humanoid", 1e-5), ("deepmimic", 1e-5)])
def test_feet_are_flat_on_the_ground_at_the_standing_height(client, name, tol):
    """standing_q puts the soles on z = 0: closest distance foot-to-plane ~0, every other link clear."""
    ground = add_ground(client)
    char = Character.load(client, name)
    char.reset_state(char.standing_q())
    gap = {}
    for link in char.link_names:
        pts = p.getClosestPoints(char.body_id, ground, 0.5, linkIndexA=char.link_index(link), physicsClientId=client)
        gap[link] = min((c[8] for c in pts), default=np.inf)
    for foot in char.model.feet:
        assert abs(gap[foot]) < tol, (foot, gap[foot])
    others = [gap[k] for k in char.link_names if k not in char.model.feet]
    assert min(others) > 0.03


def test_total_mass_is_70_kg_and_supported_masses_add_up(client):
    char = Character.load(client, "humanoid")
    assert abs(char.total_mass - 70.0) < 0.5
    assert char.total_mass == pytest.approx(sum(char.link_masses.values()), abs=1e-9)
    assert char.total_mass == pytest.approx(load_model("humanoid").kinematics().total_mass, abs=1e-9)
    m = char.link_masses
    assert char.supported_mass["left_hip"] == pytest.approx(m["left_thigh"] + m["left_shin"] + m["left_foot"])
    assert char.supported_mass["left_wrist"] == pytest.approx(m["left_hand"])
    upper = m["chest"] + m["head"] + sum(m[f"{s}_{k}"] for s in ("left", "right")
                                         for k in ("upper_arm", "forearm", "hand"))
    assert char.supported_mass["spine_upper"] == pytest.approx(upper)
    vec = char.supported_mass_vector()
    assert np.all(vec[0:6] == char.total_mass)
    assert vec[char.layout["left_knee"].v][0] == pytest.approx(m["left_shin"] + m["left_foot"])


@pytest.mark.parametrize("name", ["humanoid", "deepmimic"])
def test_supported_mass_is_child_link_plus_outboard_joints(client, name):
    """Recursively over the URDF tree, fixed joints included: S(j) = m(child) + sum of S over the
    joints hanging from the child; the root carries the total."""
    char = Character.load(client, name)
    joints = char.model.joints  # (name, kind, parent link, child link), file order
    subtree = dict(char.link_masses)
    for _, _, parent, child in reversed(joints):
        subtree[parent] += subtree[child]
    assert subtree[char.model.base_link] == pytest.approx(char.total_mass, rel=1e-12)
    for jname, kind, _, child in joints:
        if kind != "fixed":
            expected = char.link_masses[child] + sum(subtree[c] for _, _, par, c in joints if par == child)
            assert char.supported_mass[jname] == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("name", ["humanoid", "deepmimic"])
def test_reset_state_then_get_state_round_trips(client, name):
    char = Character.load(client, name)
    rng = np.random.default_rng(0)
    lay = char.layout
    for _ in range(5):
        q, v = random_state(char, rng)
        char.reset_state(q, v)
        q1, v1 = char.get_state()
        assert np.allclose(q1[0:3], q[0:3], atol=1e-12)
        assert same_rotations(q1[3:7], q[3:7]) < 1e-9
        assert same_rotations(q1[lay.sph_q], q[lay.sph_q]) < 1e-9
        assert np.allclose(q1[lay.rev_q], q[lay.rev_q], atol=1e-12)
        assert np.allclose(v1, v, atol=1e-9)


def test_deepmimic_state_is_expressed_in_z_up_axes(client):
    """Bending DeepMimic's chest by +0.3 rad about our +Y (forward flexion) moves its neck toward +X."""
    char = Character.load(client, "deepmimic")
    q = char.standing_q()
    q[char.layout["chest"].q] = Rotation.from_rotvec([0, 0.3, 0]).as_quat()
    char.reset_state(q)
    neck, chest = char.link_pose("neck"), char.link_pose("chest")
    d = neck[0] - chest[0]
    assert np.allclose(d / np.linalg.norm(d), [np.sin(0.3), 0, np.cos(0.3)], atol=1e-9)
    assert same_rotations(chest[1], Rotation.from_rotvec([0, 0.3, 0]).as_quat()) < 1e-6


def test_humanoid_hinges_bend_the_agreed_way(client):
    """Knee +: the foot goes back (-X); elbow +: the hanging forearm comes forward (+X)."""
    char = Character.load(client, "humanoid")
    q = char.standing_q()
    q[char.layout["left_knee"].q] = 0.5
    q[char.layout["left_elbow"].q] = 0.5
    char.reset_state(q)
    pos = {k: v[0] for k, v in char.link_poses().items()}
    assert pos["left_foot"][0] < pos["left_shin"][0] - 0.1
    assert pos["left_hand"][0] > pos["left_forearm"][0] + 0.1
    lo, hi = char.joint_limit_vectors()
    for j in ("left_knee", "right_knee", "left_elbow", "right_elbow"):
        assert (lo[char.layout[j].v][0], hi[char.layout[j].v][0]) == pytest.approx((0.0, 2.6))


def test_per_dof_vectors_follow_the_model_groups(client):
    char = Character.load(client, "humanoid")
    lay = char.layout
    kp, kd, tau, damping = char.kp_vector(), char.kd_vector(1 / 60), char.torque_limit_vector(), char.damping_vector()
    for x in (kp, kd, tau, damping):
        assert x.shape == (lay.nv,)
    assert np.all(kp[0:6] == 0) and np.all(np.isinf(tau[0:6]))
    assert np.all(kp[lay["left_hip"].v] == 800.0) and np.all(kd[lay["left_hip"].v] == 80.0)
    assert tau[lay["right_knee"].v][0] == 250.0 and np.all(tau[lay["left_wrist"].v] == 30.0)
    assert np.all(tau[lay["neck"].v] == 50.0) and np.all(tau[lay["spine_lower"].v] == 300.0)
    lo, hi = char.joint_limit_vectors()
    assert np.allclose(lo[lay["left_hip"].v], [-0.5, -2.45, -0.7]) and np.allclose(hi[lay["left_hip"].v], [0.8, 0.5, 0.85])
    assert np.all(np.isinf(lo[0:6])) and np.all(lo <= hi)


def test_end_effector_poses_are_their_link_frames(client):
    char = Character.load(client, "humanoid")
    ee = char.end_effector_poses()
    assert set(ee) == {"head", "left_hand", "right_hand", "left_foot", "right_foot"}
    pos, orn = ee["left_hand"]
    assert np.allclose(pos, char.link_pose("left_hand")[0]) and np.allclose(orn, char.link_pose("left_hand")[1])
    wrist_z = (70.0 + 434.0 + 422.2 + 531.9 - 281.7 - 268.9) / 1741.0 * 1.75 - 0.035  # SUPR - 35 mm - arm
    assert np.allclose(pos, [0.0, 0.19, wrist_z], atol=1e-5)


def test_link_poses_agree_with_the_pure_numpy_kinematics(client):
    """The retargeter's Kinematics (URDF, no PyBullet) and PyBullet place every link frame identically."""
    char = Character.load(client, "humanoid")
    kin = char.model.kinematics()
    rng = np.random.default_rng(9)
    for _ in range(5):
        q, _ = random_state(char, rng)
        char.reset_state(q)
        pos, rot = kin.forward(q)
        for link, (p_bullet, q_bullet) in char.link_poses().items():
            assert np.allclose(pos[link][0], p_bullet, atol=1e-7), link
            assert same_rotations(rot[link][0].as_quat(), q_bullet) < 1e-6, link  # PyBullet: ~float32 here


def test_link_velocities_and_centre_of_mass(client):
    char = Character.load(client, "humanoid")
    com = char.center_of_mass()
    assert abs(com[0]) < 0.02 and abs(com[1]) < 1e-9 and 0.9 < com[2] < 1.05  # ~56 % of stature
    q, v = char.get_state()
    v[0:3] = [1.0, -2.0, 0.5]
    char.reset_state(q, v)
    lin, ang = char.link_velocities()
    assert np.allclose(lin, [1.0, -2.0, 0.5]) and np.allclose(ang, 0.0)


@pytest.mark.parametrize("mode", ["exclude_parent", "exclude_all_parents"])
def test_zero_pose_is_free_of_self_contacts(client, mode):
    """With self-collision on, the standing zero pose touches only its parents (so it does not explode)."""
    char = Character.load(client, "humanoid", self_collision=mode)
    p.performCollisionDetection(physicsClientId=client)
    close = {(char.link_name(c[3]), char.link_name(c[4]), round(c[8], 4))
             for c in p.getContactPoints(char.body_id, char.body_id, physicsClientId=client) if c[8] < 0.005}
    assert not close


def test_fixed_base_holds_a_teleported_base(client):
    char = Character.load(client, "humanoid", fixed_base=True)
    q = char.standing_q()
    q[0:3] = [1.0, 2.0, 1.5]
    q[3:7] = Rotation.from_euler("z", 0.7).as_quat()
    char.reset_state(q)
    for _ in range(60):
        p.stepSimulation(physicsClientId=client)
    q1, _ = char.get_state()
    assert np.allclose(q1[0:3], q[0:3], atol=1e-6) and same_rotations(q1[3:7], q[3:7]) < 1e-6


@pytest.mark.parametrize("seed", range(3))
def test_humanoid_ragdoll_drop_collapses_without_exploding(client, seed):
    """Motors off, dt = 1/60 s, 5 s: falls from up to 1 m with a random tilt and push, ends lying down,
    no NaN, no link faster than 20 m/s (measured peak ~16 m/s on a hand at impact)."""
    dt = 1.0 / 60.0
    p.setPhysicsEngineParameter(fixedTimeStep=dt, physicsClientId=client)
    ground = add_ground(client)
    p.changeDynamics(ground, -1, lateralFriction=0.9, physicsClientId=client)
    char = Character.load(client, "humanoid")
    rng = np.random.default_rng(seed)
    q = char.standing_q()
    q[2] += rng.uniform(0.3, 1.0)
    q[3:7] = Rotation.from_rotvec(rng.normal(size=3) * 0.4).as_quat()
    v = np.zeros(char.layout.nv)
    v[0:6] = rng.normal(size=6)
    char.reset_state(q, v)
    peak = 0.0
    for _ in range(int(round(5.0 / dt))):
        p.stepSimulation(physicsClientId=client)
        lin, ang = char.link_velocities()
        assert np.isfinite(lin).all() and np.isfinite(ang).all()
        peak = max(peak, float(np.linalg.norm(lin, axis=1).max()))
    q_end, v_end = char.get_state()
    assert peak < 20.0
    assert np.isfinite(q_end).all()
    assert q_end[2] < 0.4  # the pelvis ends near the ground: it collapsed
    assert np.linalg.norm(char.link_velocities()[0], axis=1).max() < 1.0  # and came to rest


def test_deepmimic_ragdoll_drop_at_its_own_time_step(client):
    """The DeepMimic model has no joint damping (as in the example), which simulates at 1/240 s."""
    dt = 1.0 / 240.0
    p.setPhysicsEngineParameter(fixedTimeStep=dt, physicsClientId=client)
    add_ground(client)
    char = Character.load(client, "deepmimic")
    q = char.standing_q()
    q[2] += 0.5
    q[3:7] = Rotation.from_rotvec([0.3, 0.2, 0.0]).as_quat()
    char.reset_state(q)
    peak = 0.0
    for _ in range(int(round(5.0 / dt))):
        p.stepSimulation(physicsClientId=client)
        peak = max(peak, float(np.linalg.norm(char.link_velocities()[0], axis=1).max()))
    assert peak < 20.0 and char.get_state()[0][2] < 0.4


def test_load_refuses_a_bad_self_collision_mode_and_bad_base_pose(client):
    with pytest.raises(ModelError, match="self_collision 'sometimes'"):
        Character.load(client, "humanoid", self_collision="sometimes")
    with pytest.raises(ValueError, match="base_position"):
        Character.load(client, "humanoid", base_position=[0, 0])
