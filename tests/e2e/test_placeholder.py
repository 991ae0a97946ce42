def test_placeholder():
    assert 1 + 1 == 2
