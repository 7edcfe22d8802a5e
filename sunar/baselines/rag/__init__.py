"""Retrieve-then-read: the plain baseline of the GenSco and RA-ISF papers."""
