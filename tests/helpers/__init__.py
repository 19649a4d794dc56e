"""What several test modules share. A test module imports shared helpers from here (or from
tests/fake_upstream.py, the one fake upstream), never from another test module."""
