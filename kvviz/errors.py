class BadInput(ValueError):
    """Input a user or a file supplied that kvviz refuses, with a one-line reason."""
