"""RiverSwim as the spec states it (repro.papers.cmcboot.synth)."""

import numpy as np
import pytest

from repro.papers.cmcboot.synth import LEFT, RIGHT, riverswim
from repro.rl.mdp import policy_iteration


def test_default_variant_matches_the_spec():
    m = riverswim()
    assert m.P.shape == (6, 2, 6)
    np.testing.assert_allclose(m.P.sum(-1), 1.0)
    for s in range(6):
        assert m.P[s, LEFT, max(s - 1, 0)] == 1.0
    np.testing.assert_allclose(m.P[0, RIGHT, :2], [0.7, 0.3])
    np.testing.assert_allclose(m.P[3, RIGHT, 2:5], [0.1, 0.6, 0.3])
    np.testing.assert_allclose(m.P[5, RIGHT, 4:], [0.7, 0.3])
    assert m.R[0, LEFT] == 0.005 and m.R[5, RIGHT] == 1.0 and m.R.sum() == 1.005
    np.testing.assert_allclose(m.init, [0, 0.5, 0.5, 0, 0, 0])
    # with gamma 0.9 swimming right is optimal everywhere
    _, _, pi = policy_iteration(m.P, m.R, m.gamma)
    assert (pi.argmax(-1) == RIGHT).all()


def test_parameters_are_configurable_and_checked():
    m = riverswim({"n_states": 4, "gamma": 0.5, "start_states": [0]})
    assert m.P.shape == (4, 2, 4) and m.gamma == 0.5 and m.init[0] == 1.0
    with pytest.raises(ValueError, match="p_right"):
        riverswim({"p_right": 0.5})
    with pytest.raises(ValueError, match="unknown"):
        riverswim({"n_state": 6})
