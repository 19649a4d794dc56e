"""The test suite, a package so that `tests.helpers` and `tests.fake_upstream` import one way
whatever directory pytest starts in (pytest puts the repository root on sys.path)."""
