"""Reports of runs: :mod:`qoslab.report.terminal` for the terminal (rich, on stderr)."""
