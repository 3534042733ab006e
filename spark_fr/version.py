"""The version of spark_fr."""
__version__ = "0.1.0"
