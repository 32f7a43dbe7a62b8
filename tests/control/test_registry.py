"""The controller registry: lookup by name, helpful errors, no silent duplicates."""

from __future__ import annotations

import pytest

from tracker.control import registry
from tracker.control.pd import PDController
from tracker.control.spd import SPDController
from tracker.errors import ConfigError, TrackerError
from tracker.sim.pendulum import TwoLinkPendulum


def test_pd_and_spd_are_registered_and_built_by_name():
    assert {"pd", "spd"} <= set(registry.names())
    pend = TwoLinkPendulum()
    spd = registry.create("spd", layout=pend.layout, dynamics=pend, target_velocity="zero")
    pd = registry.create("pd", layout=pend.layout, dynamics=pend)
    assert isinstance(spd, SPDController) and spd.name == "spd" and spd.target_velocity == "zero"
    assert isinstance(pd, PDController) and pd.name == "pd"


def test_unknown_name_lists_the_valid_ones():
    with pytest.raises(ConfigError) as err:
        registry.get("stable_pd")
    msg = str(err.value)
    assert msg.startswith("unknown controller 'stable_pd'; valid controllers are: ")
    for name in registry.names():
        assert name in msg
    assert isinstance(err.value, TrackerError)  # the CLI prints it as one line


def test_a_name_cannot_be_taken_twice():
    class Other:
        pass

    with pytest.raises(
        ValueError,
        match="controller 'spd' is already registered by tracker.control.spd.SPDController",
    ):
        registry.register("spd")(Other)
    assert registry.get("spd") is SPDController
