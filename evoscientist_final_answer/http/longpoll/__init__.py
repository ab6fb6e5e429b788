"""Held requests (``wait=``): one shared poll per thread (``waiting``), the cap on how
many are held (``held``), and how a poll answers them all in one pass (``delivery``,
``held_response``; past the host's middleware in our complete app: ``front_door``).
"""
