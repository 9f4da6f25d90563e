"""Speed benchmarks: scripts that print figures (``python -m benchmarks.<name>``).

Speed goals are measured here, never asserted by the test suite.
"""
