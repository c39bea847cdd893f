"""A stand-in for vLLM's import paths, for the capture plugin's tests (no vLLM code): only the
method names and parameters the plugin wraps. The tests fill its objects from kvviz's simulator."""
__version__ = "0.34.0"
