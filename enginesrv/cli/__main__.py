"""``python -m enginesrv.cli``: the command line, as the ``enginesrv`` script runs it."""

from enginesrv.cli import main

raise SystemExit(main())
