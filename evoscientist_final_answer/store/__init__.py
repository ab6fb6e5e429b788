"""I/O: read a thread's newest root checkpoint from a store and hand it to ``answer``."""
