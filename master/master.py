"""``python master.py COMMAND``, run inside ``master/``: the same CLI as ``python -m master``.

Python puts this script's folder (``master/``) first on ``sys.path``, where
``master.py`` itself would shadow the ``master`` package (and its sibling
modules could shadow others). So the folder is taken off the path and the
repository root put first before anything is imported from the project.
"""

from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.dirname(_HERE)
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
sys.path.insert(0, _ROOT)


if __name__ == "__main__":
    from master.__main__ import run

    sys.exit(run(prog="python master.py"))
