"""Helpers shared by the bench scripts: the machine a run was on, its raw JSON."""
