"""Test helpers: FMU builders and drivers, Ray fixtures, validation records."""
