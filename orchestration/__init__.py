"""System files, master algorithms, execution backends, results and the CLI."""
