"""The thread-count context helper: inside the block torch uses the count asked for, and
afterwards the count the learner had is back, even when it is neither 1 nor the count
the tests run with (the Makefile and conftest.py start every test with one thread)."""
import pytest
import torch

from utils.threads import threads


@pytest.fixture
def learner_count():
    """A thread count a learner might have set, unlike the tests' 1 and the helper's
    default; the tests' own count is put back afterwards."""
    before = torch.get_num_threads()
    torch.set_num_threads(3)
    assert torch.get_num_threads() == 3
    yield 3
    torch.set_num_threads(before)


@pytest.mark.parametrize("count", [1, 2])
def test_sets_the_count_inside_and_restores_the_learners_count(learner_count, count):
    with threads(count) as inside:
        assert inside == count and torch.get_num_threads() == count
    assert torch.get_num_threads() == learner_count


def test_nested_blocks_restore_each_outer_count(learner_count):
    with threads(1):
        with threads(2):
            assert torch.get_num_threads() == 2
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == learner_count


def test_restores_the_learners_count_after_an_error(learner_count):
    with pytest.raises(RuntimeError, match="inside"):
        with threads(1):
            raise RuntimeError("inside")
    assert torch.get_num_threads() == learner_count


@pytest.mark.parametrize("count, error", [(0, ValueError), (1.5, TypeError), ("2", TypeError)])
def test_rejects_a_bad_count_and_leaves_the_learners_count(learner_count, count, error):
    with pytest.raises(error, match="count"):
        with threads(count):
            pass
    assert torch.get_num_threads() == learner_count
