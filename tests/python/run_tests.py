"""The Python package's suite: every test_*.py here, under unittest.

    PYTHONPATH=<build>/python SALVO_VALIDATION=1 python3 run_tests.py [-v] [pattern...]

Exit status as ctest reads it: 0 when every test passed and the validation
layer said nothing, 1 otherwise, 77 (a skip) where NumPy is missing or
there is no Vulkan device. Extra arguments are unittest name patterns (-k).
"""

import os
import sys
import unittest

SKIP = 77
sys.dont_write_bytecode = True  # no __pycache__ in the source tree


def main():
    try:
        import numpy  # noqa: F401
    except ImportError as e:
        print(f"NumPy is missing ({e}; Debian: python3-numpy): skipped", file=sys.stderr)
        return SKIP
    import salvo  # a failure here is a failure: the module was built

    if not salvo.enumerate_devices():
        print("no Vulkan device: skipped", file=sys.stderr)
        return SKIP

    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    import support

    args = [a for a in sys.argv[1:] if a != "-v"]
    loader = unittest.TestLoader()
    if args:
        loader.testNamePatterns = [f"*{a}*" for a in args]
    suite = loader.discover(here, pattern="test_*.py", top_level_dir=here)
    verbosity = 2 if "-v" in sys.argv[1:] else 1
    result = unittest.TextTestRunner(verbosity=verbosity, stream=sys.stderr).run(suite)
    if result.testsRun == 0:
        print("no test ran", file=sys.stderr)
        return 1
    if support.validation_records:
        print(f"{len(support.validation_records)} validation message(s):", file=sys.stderr)
        for r in support.validation_records:
            print(f"  {r.getMessage()}", file=sys.stderr)
        return 1
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
