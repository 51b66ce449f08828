"""Rule validation: invalid rules fail before compute, naming the field."""

import pytest

from farkle_jax.game import rules as rules_lib


@pytest.mark.parametrize("change,field", [
    (dict(goal=10_025), "goal"),
    (dict(three_pairs=-50), "three_pairs"),
    (dict(three_pairs_repeat=1), "three_pairs_repeat"),
    (dict(straight=1525), "straight"),
    (dict(floor=500), "floor"),
    (dict(floor=-2525), "floor"),
    (dict(n_of_a_kind="triple"), "n_of_a_kind"),
    (dict(single_scores=(100, 0, 0, 0, 50)), "single_scores"),
    (dict(bank_minimum=20_000), "bank_minimum"),
    (dict(penalty_count=0), "penalty_count"),
    (dict(triple_scores=(1000, 0, 300, 400, 500, 600)), "triple_scores"),
    (dict(step=0), "step"),
])
def test_invalid_rules_name_the_field(change, field):
  with pytest.raises(rules_lib.RulesError, match=rf"rules\.{field} = "):
    rules_lib.facebook().replace(**change)


def test_presets():
  fb, mn = rules_lib.facebook(), rules_lib.minimal()
  assert (fb.bank_minimum, fb.penalty, fb.floor, fb.farkle_states) == (
      300, 500, -2500, 3)
  assert (mn.bank_minimum, mn.penalty, mn.low, mn.farkle_states) == (
      50, 0, 0, 1)


def test_from_mapping_rejects_unknown_fields():
  with pytest.raises(rules_lib.RulesError, match="rules.gaol"):
    rules_lib.from_mapping({"preset": "facebook", "gaol": 5000})
  with pytest.raises(rules_lib.RulesError, match="rules.preset"):
    rules_lib.from_mapping({"preset": "zilch"})
  r = rules_lib.from_mapping({"preset": "minimal", "goal": 5000,
                              "single_scores": [100, 0, 0, 0, 50, 0]})
  assert r.goal == 5000 and r.name == "minimal"
