"""Where things are: the repository, the tests and their fixtures, the
JavaScript clients' scripts (every test module finds files through these,
wherever its folder is)."""

import os

#: tests/
TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: the repository's root
ROOT = os.path.dirname(TESTS)
#: tests/fixtures/
FIXTURES = os.path.join(TESTS, "fixtures")
#: tests/js/ (the bitsharesjs and btsdex scripts and their node_modules)
JS_DIR = os.path.join(TESTS, "js")
