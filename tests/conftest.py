import os
import sys

# Tests import helpers such as tests/reference.py as top-level modules.
sys.path.insert(0, os.path.dirname(__file__))
