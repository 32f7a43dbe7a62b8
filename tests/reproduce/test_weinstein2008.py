"""Weinstein, Teran & Fedkiw 2008 reproduction: every claim with its number and tolerance."""

from __future__ import annotations

import numpy as np
import pytest

from tracker.control import closed_form as cf
from tracker.reproduce import weinstein2008 as W
from tracker.scenes import one_dof


def test_closed_forms_satisfy_the_ode_to_1e_8_in_all_three_regimes():
    res = W.ode_residuals(n=51)
    assert set(res) == {"over", "critical", "under"}
    assert max(res.values()) < 1e-8


def test_plain_gains_converge_to_pd_with_half_k_and_doubled_to_k_first_order():
    c = W.convergence_orders(steps=(0.01, 0.005, 0.0025))
    # Observed order of the max error: 1 within 0.1 (we see 0.95-0.99).
    for name in ("plain", "doubled"):
        assert all(0.9 < o < 1.1 for o in c[name + "_order"]), c
        assert c[name][-1] < 5e-3
    # Plain gains do not converge to PD with the full k (error stays ~0.1).
    assert min(c["plain_vs_k"]) > 0.05


def test_at_steps_of_half_and_one_second_one_step_removes_almost_all_error_while_pd_diverges():
    big = W.large_steps(kp=100.0)
    for h in (0.5, 1.0):
        assert big[h]["analytic_first"] < 0.07  # >= 93 % of the error gone in one step (6.5 %, 0.35 %)
        assert big[h]["analytic_end"] < 1e-9
        assert big[h]["pd_end"] > 1e6  # explicit PD (same gains, same integrator) diverges


def test_joint_under_gravity_pd_sags_0_098_and_analytic_pd_reaches_the_target():
    g = W.gravity_joint(k1=100.0, duration=3.0)
    assert g["pd_sag"] == pytest.approx(0.098, abs=1e-3)  # 0.0976 (k1 e = m g l cos e)
    assert g["pd_sag"] == pytest.approx(g["pd_sag_theory"], abs=1e-6)
    assert g["analytic_end"] < 1e-12 and g["analytic_max"] < 1e-12
    assert g["analytic_from_below_end"] < 1e-9


def test_plank_chains_reach_and_hold_targets_and_the_block_only_when_modelled():
    ch = W.chains(n=5, duration=2.5)
    for name in ("horizontal", "curled", "block in the inverse dynamics"):
        assert ch[name]["final"] < 1e-6, name  # 9e-10 after 2.5 s at k_p = 100 /s²
        assert ch[name]["held"] < 1e-3, name
        assert ch[name]["prediction_miss"] < 1e-9, name  # each joint hits its closed-form prediction
    assert ch["block not in the inverse dynamics"]["final"] > 0.1  # sags (0.76 rad)
    r = ch["block not in the inverse dynamics"]["run"]
    assert r.tip[-1, 2] < ch["block in the inverse dynamics"]["run"].tip[-1, 2] - 0.2  # the tip hangs lower
    assert ch["explicit PD, horizontal"]["final"] > 0.1  # the same stiffness as plain PD does not hold


def test_time_from_rest_to_10_percent_is_3_890_over_sqrt_kp():
    tim = W.timing(kps=(25.0, 400.0), dt=1 / 240, chain_n=5)
    for r in tim["rows"]:
        assert r["closed_form"] == pytest.approx(3.890 / np.sqrt(r["kp"]), rel=1e-3)
        # The discrete scheme and every chain joint: within 2 steps + 1 % of the formula.
        tol = 2 * tim["dt"] + 0.01 * r["formula"]
        assert abs(r["scheme"] - r["formula"]) < tol
        assert max(abs(t - r["formula"]) for t in r["chain"]) < tol
        assert max(r["chain"]) - min(r["chain"]) < 1e-9  # stiffness alone sets the timing: all joints agree


def test_one_dof_scene_rejects_unknown_methods():
    with pytest.raises(ValueError):
        one_dof.gravity_joint_run("pid", 100.0, 0.01, 0.1)


def test_reproduce_quick_writes_the_report(tmp_path, monkeypatch):
    # The humanoid part is covered by tests/control/test_analytic_pd.py and tests/sim; keep this one fast.
    monkeypatch.setattr(W, "humanoid", lambda quick=False: {"exact": {60: 1e-15}, "tracking": []})
    timing = W.timing
    monkeypatch.setattr(W, "timing", lambda **kw: timing(kps=(100.0,), dt=1 / 120, chain_n=5))
    report = W.run(tmp_path, quick=True)
    text = report.read_text()
    assert "0.0976" in text and "3.890" in text
    for f in ("weinstein2008_fig3.png", "weinstein2008_fig4.png", "weinstein2008_fig6.png",
              "weinstein2008_chains.png", "weinstein2008_timing.png"):
        assert (tmp_path / f).stat().st_size > 1000


@pytest.mark.parametrize("hz", [60, 30])
def test_humanoid_walk_and_kick_track_next_to_spd(hz):
    from tests.sim.test_tracking import track

    for clip in ("cmu_02_01_walk", "cmu_10_01_soccer_kick"):
        rec_a, m_a = track(clip, controller="analytic_pd", dt=1 / hz, duration=1.5)
        rec_s, m_s = track(clip, controller="spd", dt=1 / hz, duration=1.5)
        assert not rec_a.diverged and not rec_s.diverged
        # Measured on the whole clips: analytic PD 0.0021-0.0031 rad mean, SPD 0.0050-0.0179.
        assert m_a["joint_error_mean_rad"] < 0.01
        assert m_a["joint_error_mean_rad"] < m_s["joint_error_mean_rad"]
