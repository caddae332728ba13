"""The course's tests and their shared helpers (``from tests import output_tolerance``)."""
