"""The thread-count context helper sets and restores torch's thread count."""
import pytest
import torch

from utils.threads import threads


def test_sets_one_thread_inside_and_restores_the_previous_count():
    before = torch.get_num_threads()
    with threads() as count:
        assert count == 1 and torch.get_num_threads() == 1
    assert torch.get_num_threads() == before


def test_restores_the_count_after_an_error():
    before = torch.get_num_threads()
    with pytest.raises(RuntimeError, match="inside"):
        with threads(1):
            raise RuntimeError("inside")
    assert torch.get_num_threads() == before


def test_results_on_one_thread_equal_the_default():
    x = torch.randn(64, 16, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    with threads(1):
        inside = (x @ x.T).sum()
    assert torch.allclose(inside, (x @ x.T).sum(), rtol=1e-12)


@pytest.mark.parametrize("count, error", [(0, ValueError), (1.5, TypeError), ("2", TypeError)])
def test_rejects_a_bad_count(count, error):
    with pytest.raises(error, match="count"):
        with threads(count):
            pass
