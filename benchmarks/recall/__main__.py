"""``python -m benchmarks.recall``: see :mod:`benchmarks.recall.run`."""

from benchmarks.recall.run import main

raise SystemExit(main())
