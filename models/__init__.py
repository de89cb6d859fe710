"""Bundled models: real bnlearn networks (CC BY-SA 3.0, see README.md) and an activity chain."""
