"""Shared, tested helpers for the residual-connections course.

One concept per module; import what you need, e.g. ``from utils import plotting``.
"""
