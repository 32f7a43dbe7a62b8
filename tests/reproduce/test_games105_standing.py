"""GAMES105's standing table: the stance constraints without the feedback are a row of their own."""

from __future__ import annotations

from tracker.control.balance import BalanceOptions
from tracker.reproduce.games105 import STANDING_ROWS
from tracker.sim.push import Push, run_push
from tracker.sim.stance import stand_simulation


def _stand(kw, seconds=5.0):
    sim = stand_simulation(dt=1 / 60, balance=None if kw is None else BalanceOptions(**kw))
    try:
        return run_push(sim, Push(force=0.0), seconds)
    finally:
        sim.close()


def test_constraints_without_feedback_differ_from_spd_alone_and_from_constraints_with_feedback() -> None:
    rows = dict(STANDING_ROWS)
    assert rows["constraints, no feedback"] == {"kp": 0.0, "kd": 0.0}
    names = [n for n, _ in STANDING_ROWS]
    k = names.index("constraints, no feedback")
    assert names[k - 1] == "none (SPD alone)" and names[k + 1].startswith("jacobian")
    alone, cons, both = _stand(None), _stand(rows["constraints, no feedback"]), _stand({})
    # measured: SPD alone falls at 1.083 s, the constraints alone hold it 0.68 s longer, both stand
    assert alone.fell and cons.fell and not both.fell
    assert cons.fell_time_s > alone.fell_time_s + 0.3, (alone.fell_time_s, cons.fell_time_s)
    assert both.com_drift_m < 0.02 < cons.com_drift_m


def test_feedback_without_constraints_leaves_the_prediction_free() -> None:
    from tracker.control.balance import BalanceFeedback
    from tracker.sim.support import support_of

    sim = stand_simulation(balance=BalanceOptions(constraints=False))
    try:
        sim.world.settle_contacts(sim.character)
        q, v = sim.character.get_state()
        fb = BalanceFeedback(sim.character, BalanceOptions(constraints=False))
        term = fb.term(q, v, support_of(sim.character, sim.world.ground))
        with_rows = BalanceFeedback(sim.character, BalanceOptions()).term(q, v, support_of(sim.character,
                                                                                               sim.world.ground))
    finally:
        sim.close()
    assert term.constraints is None and with_rows.constraints is not None
    assert (term.tau == with_rows.tau).all()
