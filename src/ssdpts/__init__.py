"""ssdpts: SNIA Solid State Storage Performance Test Specification suite on fio."""

__version__ = "0.1.0"
